import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import type { ServiceContext } from '../../src/operations/context.ts';
import { type CreatedMerchant, createMerchant } from '../../src/operations/manage-merchants.ts';
import { startWorker, type Worker } from '../../src/worker/worker.ts';
import { DB_KIND } from '../helpers/harness.ts';

export interface LiveServer {
  /** http://127.0.0.1:PORT */
  url: string;
  app: FastifyInstance;
  ctx: ServiceContext;
  merchant: CreatedMerchant;
  /** An API request with the merchant's test key, through inject. */
  api(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * A real server on a random port with the in-process worker on the system clock, as
 * `safehold serve` runs it: the simulated phone calls back after a short delay and the worker
 * delivers it, so the browser sees the push's real asynchronous shape.
 */
export async function startLiveServer(): Promise<LiveServer> {
  const schema = DB_KIND === 'postgres' ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const config = {
    ...loadConfig({}),
    databaseUrl: process.env.DATABASE_URL,
    secret: 'browser-test-secret',
  };
  const ctx = await openContext(config, { clock: systemClock, dataDir: undefined, schema });
  ctx.simulatorDelayMs = 300;
  const app = await buildApp({
    ctx,
    rateLimiter: createRateLimiter(),
    defaultRateLimitPerMinute: 100_000,
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  ctx.publicUrl = url;
  const worker: Worker = startWorker(ctx, {
    intervalMs: 100,
    logger: { error: (...args: unknown[]) => console.error(...args), debug: () => {} },
  });
  const merchant = await createMerchant(ctx, { name: 'Kibanda Electronics', email: 'shop@example.com' });
  return {
    url,
    app,
    ctx,
    merchant,
    api: ({ headers, ...rest }) =>
      app.inject({ ...rest, headers: { authorization: `Bearer ${merchant.test_key}`, ...headers } }),
    async close() {
      await worker.stop();
      await app.close();
      if (schema) await ctx.db.query(`DROP SCHEMA "${schema}" CASCADE`);
      await ctx.db.close();
    },
  };
}
