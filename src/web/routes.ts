import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { buyerRoutes } from './buyer-routes.ts';
import { challengeRoutes } from './challenge-routes.ts';
import { checkoutRoutes } from './checkout-routes.ts';
import type { WebDeps } from './deps.ts';
import { installFormBody } from './form-body.ts';
import { TOKEN_ROUTE_HEADERS } from './layout.ts';
import { operatorRoutes } from './operator-routes.ts';
import { statusRoute } from './status-route.ts';

/**
 * The token-bearing web routes: checkout (/pay/{token}), its status and 3-D Secure challenge, and
 * the buyer page (/buyer/{token}). They carry no `access` config, so the API-key hook passes
 * them by; the token in the path is the credential. Every response, errors included, gets the
 * no-store, no-referrer, no-framing headers (pages add their own nonce CSP).
 */
export const webRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, deps) => {
  installFormBody(app);
  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(TOKEN_ROUTE_HEADERS)) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    return payload;
  });
  await app.register(checkoutRoutes, deps);
  await app.register(statusRoute, deps);
  await app.register(challengeRoutes, deps);
  await app.register(buyerRoutes, deps);
  await app.register(operatorRoutes, deps);
};
