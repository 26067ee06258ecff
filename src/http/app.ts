import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { newId } from '../domain/ids.ts';
import type { ServiceContext } from '../operations/context.ts';
import { webRoutes } from '../web/routes.ts';
import { installAuth } from './auth.ts';
import { frameworkErrorHandler, installErrorHandling } from './error-handler.ts';
import { BODY_LIMIT_BYTES, installJsonBody } from './json-body.ts';
import { installOpenApi } from './openapi.ts';
import type { RateLimiter } from './rate-limit.ts';
import { RouteTable } from './route-table.ts';
import { balanceRoutes } from './routes/balance.ts';
import { disputeRoutes } from './routes/disputes.ts';
import { eventRoutes } from './routes/events.ts';
import { healthRoutes } from './routes/health.ts';
import { paymentLinkRoutes } from './routes/payment-links.ts';
import { payoutRoutes } from './routes/payouts.ts';
import { railCallbackRoutes } from './routes/rail-callbacks.ts';
import { refundRoutes } from './routes/refunds.ts';
import { testHelperRoutes } from './routes/test-helpers.ts';
import { transactionActionRoutes } from './routes/transaction-actions.ts';
import { transactionRoutes } from './routes/transactions.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { validatorCompiler } from './validation.ts';

export interface AppOptions {
  ctx: ServiceContext;
  rateLimiter: RateLimiter;
  defaultRateLimitPerMinute: number;
  logger: FastifyBaseLogger | false;
}

/** Builds the HTTP API (not listening). Tests call it with an in-memory database and a manual clock. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger || undefined,
    logger: options.logger ? undefined : false,
    genReqId: () => newId('request'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // While closing, Fastify answers with Connection: close and, with this option on, a bare 503
    // body outside our error envelope. Off, a request that reaches an open connection during the
    // drain is served normally (and its connection then closed), which is what a graceful stop means.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  const routes = new RouteTable();
  app.addHook('onRoute', (route) => routes.add(route.url, route.method));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });

  installJsonBody(app);
  installErrorHandling(app, (path) => routes.methodsFor(path));
  installAuth(app, options.ctx, options.rateLimiter, options.defaultRateLimitPerMinute);
  await installOpenApi(app, () => options.ctx.publicUrl);

  const deps = { ctx: options.ctx };
  await app.register(healthRoutes, deps);
  await app.register(transactionRoutes, deps);
  await app.register(transactionActionRoutes, deps);
  await app.register(paymentLinkRoutes, deps);
  await app.register(testHelperRoutes, deps);
  await app.register(webhookRoutes, deps);
  await app.register(eventRoutes, deps);
  await app.register(disputeRoutes, deps);
  await app.register(refundRoutes, deps);
  await app.register(balanceRoutes, deps);
  await app.register(payoutRoutes, deps);
  await app.register(webRoutes, deps);
  await app.register(railCallbackRoutes, deps);
  await app.ready();
  return app;
}
