import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { connectRedis, openContext } from './bootstrap.ts';
import { type Config, defaultPublicUrl, type Role } from './config.ts';
import { buildApp } from './http/app.ts';
import { createLogger } from './http/logger.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import { createMailer } from './mail/mailer.ts';
import type { ServiceContext } from './operations/context.ts';
import { createOperatorKey } from './operations/manage-keys.ts';
import { createMerchant } from './operations/manage-merchants.ts';
import { countMerchants } from './store/merchants.ts';
import { startWorker, type Worker } from './worker/worker.ts';

interface DemoKeys {
  merchantId: string;
  testKey: string;
  liveKey: string;
  operatorKey: string;
}

/** On an empty database: a demo merchant and an operator key, shown once (see demoBanner). */
async function seedDemo(ctx: ServiceContext): Promise<DemoKeys | undefined> {
  if ((await countMerchants(ctx.db)) > 0) return undefined;
  const merchant = await createMerchant(ctx, { name: 'Demo Merchant', email: 'demo@example.com' });
  const operator = await createOperatorKey(ctx);
  return {
    merchantId: merchant.merchant_id,
    testKey: merchant.test_key,
    liveKey: merchant.live_key,
    operatorKey: operator.key,
  };
}

function demoBanner(demo: DemoKeys, url: string): string {
  return [
    '',
    'First start: created a demo merchant. These keys are shown only now; keep them.',
    `  merchant id:   ${demo.merchantId}`,
    `  test key:      ${demo.testKey}`,
    `  live key:      ${demo.liveKey}  (refused until the business is verified)`,
    `  operator key:  ${demo.operatorKey}`,
    '',
    'Create a protected transaction:',
    `  curl -s ${url}/v1/transactions \\`,
    `    -H "Authorization: Bearer ${demo.testKey}" \\`,
    '    -H "Content-Type: application/json" \\',
    `    -d '{"amount": 1500.50, "title": "Used phone", "merchant_reference": "order-1001"}'`,
    '',
  ].join('\n');
}

const LOOPBACK_OR_ANY = new Set(['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::']);

/** The URL this machine reaches the server on: the port actually bound, and localhost for loopback or any. */
function listeningUrl(address: AddressInfo | string | null, host: string): string {
  if (address === null || typeof address === 'string')
    throw new Error(`unexpected listen address ${address}`);
  const name = LOOPBACK_OR_ANY.has(host)
    ? 'localhost'
    : address.family === 'IPv6'
      ? `[${address.address}]`
      : address.address;
  return `http://${name}:${address.port}`;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Listens, turning the usual start-up failures into a message that says what to do. */
async function listen(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new Error(
        `Port ${config.port} on ${config.host} is already in use (another Safehold?). ` +
          'Stop that process or choose another port, e.g. PORT=3001 npm start.',
      );
    if (code === 'EACCES')
      throw new Error(`Not allowed to listen on port ${config.port}; choose a port above 1023 with PORT.`);
    throw error;
  }
}

function whereData(config: Config): string {
  return config.databaseUrl
    ? `PostgreSQL (DATABASE_URL${config.databaseSchema ? `, schema ${config.databaseSchema}` : ''})`
    : `PGlite in ${resolve(config.dataDir)}`;
}

/** `serve --role worker`: only the worker, for deployments that run it apart from the API. */
async function serveWorkerOnly(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const ctx = await openContext(config);
  ctx.mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  const worker = startWorker(ctx, { intervalMs: config.workerPollMs, logger });
  process.stdout.write(`Safehold worker is running (data: ${whereData(config)})\n`);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await worker.stop();
    await ctx.db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

/**
 * Runs the HTTP API and, with the default role 'all', the worker in the same process (due jobs:
 * releases, expiries, simulated rail callbacks). Several processes may share one PostgreSQL.
 */
export async function serve(config: Config, role: Role = 'all'): Promise<void> {
  if (role === 'worker') return serveWorkerOnly(config);
  const logger = createLogger(config.logLevel);
  const ctx = await openContext(config);
  ctx.mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  let worker: Worker | undefined;
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  redis?.on('error', (error) =>
    logger.warn({ err: error }, 'redis error; rate limits fall back to this process'),
  );
  let app: FastifyInstance | undefined;
  try {
    app = await buildApp({
      ctx,
      rateLimiter: createRateLimiter(redis),
      defaultRateLimitPerMinute: config.rateLimitPerMinute,
      logger,
    });
    await listen(app, config);
    const url = listeningUrl(app.server.address(), config.host);
    // With PORT=0 the port is known only now; a defaulted public URL follows it. This runs before
    // the event loop can hand the server its first request.
    if (config.publicUrl === defaultPublicUrl(config.port)) ctx.publicUrl = defaultPublicUrl(portOf(url));
    // Seeded only once the port is ours: a first start that fails must not use up the one showing of the keys.
    const demo = await seedDemo(ctx);
    if (role === 'all') worker = startWorker(ctx, { intervalMs: config.workerPollMs, logger });
    const where = whereData(config);
    const publicNote = ctx.publicUrl === url ? '' : `; public URL ${ctx.publicUrl}`;
    // One write, so a reader of the pipe sees the banner and the first-start keys together.
    process.stdout.write(
      `Safehold is listening on ${url} (data: ${where}${publicNote}); API docs at ${url}/docs\n` +
        (demo ? `${demoBanner(demo, url)}\n` : ''),
    );
  } catch (error) {
    // Release the database (and the PGlite folder's lock) before the error ends the process.
    await worker?.stop();
    await app?.close().catch(() => {});
    redis?.disconnect();
    await ctx.db.close();
    throw error;
  }
  const server = app;

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    try {
      // Stop accepting connections at once (Node also drops the idle keep-alive ones), and let a
      // keep-alive connection close as soon as its request in flight is answered instead of idling
      // for the keep-alive timeout (72 s), which would hold the exit. Fastify's close then waits
      // for the requests in flight.
      server.server.keepAliveTimeout = 1;
      server.server.close();
      logger.info({ signal }, 'shutting down: no new connections; finishing the requests in flight');
      await server.close();
      await worker?.stop();
      redis?.disconnect();
      await ctx.db.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
