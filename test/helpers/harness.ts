import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/domain/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRateLimiter, type RateLimiter } from '../../src/http/rate-limit.ts';
import type { ServiceContext } from '../../src/operations/context.ts';
import { type CreatedMerchant, createMerchant } from '../../src/operations/manage-merchants.ts';

/** Which database this run uses: PostgreSQL when DATABASE_URL is set, else in-memory PGlite. */
export const DB_KIND = process.env.DATABASE_URL ? 'postgres' : 'pglite';

export interface Harness {
  app: FastifyInstance;
  ctx: ServiceContext;
  clock: ManualClock;
  /** A merchant with test and live keys (unverified unless asked). */
  merchant: CreatedMerchant;
  /** Sends a request with the merchant's test key unless another key is given. */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  newMerchant(options?: { verified?: boolean; name?: string }): Promise<CreatedMerchant>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  rateLimitPerMinute?: number;
  rateLimiter?: RateLimiter;
  publicUrl?: string;
}

/**
 * A real app on a real, empty database (its own PostgreSQL schema, or a fresh PGlite), with a
 * manual clock. Requests go through Fastify's inject: the full HTTP pipeline without a socket.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const clock = new ManualClock(new Date());
  const schema = DB_KIND === 'postgres' ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const config = {
    ...loadConfig({}),
    databaseUrl: process.env.DATABASE_URL,
    publicUrl: options.publicUrl ?? 'http://localhost:3000',
    secret: 'test-secret-for-link-tokens',
  };
  const ctx = await openContext(config, { clock, dataDir: undefined, schema });
  const app = await buildApp({
    ctx,
    rateLimiter: options.rateLimiter ?? createRateLimiter(),
    defaultRateLimitPerMinute: options.rateLimitPerMinute ?? 100_000,
    logger: false,
  });
  let count = 0;
  const newMerchant = (o: { verified?: boolean; name?: string } = {}) =>
    createMerchant(ctx, {
      name: o.name ?? `Merchant ${++count}`,
      email: `m${count}@example.com`,
      verified: o.verified,
    });
  const merchant = await newMerchant();
  return {
    app,
    ctx,
    clock,
    merchant,
    newMerchant,
    request({ key, headers, ...rest }) {
      const auth = key === null ? {} : { authorization: `Bearer ${key ?? merchant.test_key}` };
      return app.inject({ ...rest, headers: { ...auth, ...headers } });
    },
    async close() {
      await app.close();
      if (schema) await ctx.db.query(`DROP SCHEMA "${schema}" CASCADE`);
      await ctx.db.close();
    },
  };
}

export function json<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  return response.json() as T;
}
