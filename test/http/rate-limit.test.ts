import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRateLimiter, type RateLimiter } from '../../src/http/rate-limit.ts';
import { createKey } from '../../src/operations/manage-keys.ts';
import { setMerchantRateLimit } from '../../src/operations/manage-merchants.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const LIMIT = 3;
const REDIS_URL = process.env.REDIS_URL;

let h: Harness;
before(async () => {
  h = await startHarness({ rateLimitPerMinute: LIMIT });
});
after(() => h.close());

type Send = (key: string, options?: InjectOptions) => Promise<LightMyRequestResponse>;

const injectInto =
  (app: () => FastifyInstance): Send =>
  (key, options = { method: 'GET', url: '/v1/transactions' }) =>
    app().inject({ ...options, headers: { ...options.headers, authorization: `Bearer ${key}` } });

/** Another app over the harness's database (a second server instance), with its own limiter. */
const instance = (rateLimiter: RateLimiter) =>
  buildApp({ ctx: h.ctx, rateLimiter, defaultRateLimitPerMinute: LIMIT, logger: false });

function assertRateHeaders(res: LightMyRequestResponse, limit: number, remaining: number): void {
  assert.equal(res.headers['ratelimit-limit'], String(limit), `RateLimit-Limit on ${res.statusCode}`);
  assert.equal(
    res.headers['ratelimit-remaining'],
    String(remaining),
    `RateLimit-Remaining on ${res.statusCode}`,
  );
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
}

function assertLimited(res: LightMyRequestResponse, limit: number): void {
  assertErrorEnvelope(res, 429, 'rate_limit_exceeded', 'rate_limited');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^[1-9][0-9]*$/, `Retry-After must be whole seconds >= 1, got ${retryAfter}`);
  assert.ok(Number(retryAfter) <= 60);
  assertRateHeaders(res, limit, 0);
}

const freshMerchant = () => h.newMerchant();

/**
 * The rules every limiter must keep. `send` reaches an app whose default limit is LIMIT; `skip`
 * says why a suite cannot run here (no Redis).
 */
function rateLimitSuite(name: string, send: () => Send, skip: () => string | undefined): void {
  const guard = (t: TestContext): boolean => {
    const reason = skip();
    if (reason) t.skip(reason);
    return reason !== undefined;
  };

  describe(name, () => {
    it(`allows ${LIMIT} requests a minute per key, then answers 429 with Retry-After`, async (t) => {
      if (guard(t)) return;
      const m = await freshMerchant();
      for (let i = 1; i <= LIMIT; i++) {
        const res = await send()(m.test_key);
        assert.equal(res.statusCode, 200, res.body);
        assertRateHeaders(res, LIMIT, LIMIT - i);
      }
      const limited = await send()(m.test_key);
      assertLimited(limited, LIMIT);
      assert.match(limited.json().error.message, new RegExp(`${LIMIT} per minute`));
      // Still limited on the next try, and for every keyed route.
      assertLimited(
        await send()(m.test_key, {
          method: 'POST',
          url: '/v1/transactions',
          payload: { amount: 1, title: 'x' },
        }),
        LIMIT,
      );
    });

    it('puts RateLimit-* headers on every keyed response, errors included', async (t) => {
      if (guard(t)) return;
      const m = await freshMerchant();
      const readOnly = await createKey(h.ctx, {
        merchantId: m.merchant_id,
        env: 'test',
        scopes: ['transactions:read'],
      });
      const created = await send()(m.test_key, {
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: 1, title: 'Counted' },
      });
      assert.equal(created.statusCode, 201);
      assertRateHeaders(created, LIMIT, 2);
      const invalid = await send()(m.test_key, {
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: -1 },
      });
      assert.equal(invalid.statusCode, 400);
      assertRateHeaders(invalid, LIMIT, 1);
      const missing = await send()(m.test_key, {
        method: 'GET',
        url: '/v1/transactions/txn_01AAAAAAAAAAAAAAAAAAAAAAAA',
      });
      assert.equal(missing.statusCode, 404);
      assertRateHeaders(missing, LIMIT, 0);
      const refused = await send()(readOnly.key, {
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: 1, title: 'x' },
      });
      assert.equal(refused.statusCode, 403);
      assertRateHeaders(refused, LIMIT, 2);
      const live = await send()(m.live_key);
      assert.equal(live.statusCode, 403);
      assertRateHeaders(live, LIMIT, 2);
    });

    it('counts each key separately, even two keys of one merchant', async (t) => {
      if (guard(t)) return;
      const m = await freshMerchant();
      const second = await createKey(h.ctx, { merchantId: m.merchant_id, env: 'test' });
      for (let i = 0; i < LIMIT; i++) assert.equal((await send()(m.test_key)).statusCode, 200);
      assertLimited(await send()(m.test_key), LIMIT);
      const other = await send()(second.key);
      assert.equal(other.statusCode, 200, 'the second key was limited by the first');
      assertRateHeaders(other, LIMIT, LIMIT - 1);
      const live = await send()(m.live_key);
      assert.equal(live.headers['ratelimit-remaining'], String(LIMIT - 1), 'the live key has its own budget');
    });

    it('applies a per-merchant override to that merchant only', async (t) => {
      if (guard(t)) return;
      const raised = await freshMerchant();
      const plain = await freshMerchant();
      await setMerchantRateLimit(h.ctx, raised.merchant_id, LIMIT + 2);
      for (let i = 1; i <= LIMIT + 2; i++) {
        const res = await send()(raised.test_key);
        assert.equal(res.statusCode, 200, `request ${i} of the raised merchant: ${res.body}`);
        assertRateHeaders(res, LIMIT + 2, LIMIT + 2 - i);
      }
      assertLimited(await send()(raised.test_key), LIMIT + 2);

      for (let i = 0; i < LIMIT; i++) assert.equal((await send()(plain.test_key)).statusCode, 200);
      assertLimited(await send()(plain.test_key), LIMIT);
    });

    it('can lower the limit for one merchant, and go back to the default', async (t) => {
      if (guard(t)) return;
      const m = await freshMerchant();
      await setMerchantRateLimit(h.ctx, m.merchant_id, 1);
      assert.equal((await send()(m.test_key)).statusCode, 200);
      assertLimited(await send()(m.test_key), 1);
      await setMerchantRateLimit(h.ctx, m.merchant_id, null);
      const back = await send()(m.test_key);
      assert.equal(back.headers['ratelimit-limit'], String(LIMIT));
    });

    it('does not count requests that carry no valid key', async (t) => {
      if (guard(t)) return;
      const m = await freshMerchant();
      for (let i = 0; i < LIMIT + 1; i++) {
        // A wrong key: the last character changed to one it is not.
        const res = await send()(`${m.test_key.slice(0, -1)}${m.test_key.endsWith('0') ? '1' : '0'}`);
        assert.equal(res.statusCode, 401);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      }
      assert.equal((await send()(m.test_key)).statusCode, 200);
    });
  });
}

// In process: the harness's own app and limiter.
rateLimitSuite(
  'rate limits in process',
  () => injectInto(() => h.app),
  () => undefined,
);

// In Redis: the same rules, through a limiter on a real Redis, plus sharing between instances.
let redisApp: FastifyInstance | undefined;
const connections: Redis[] = [];

async function redisConnection(): Promise<Redis> {
  if (!REDIS_URL) throw new Error('REDIS_URL not set');
  // The service's own connection settings (no offline queue): wait until it is ready.
  const redis = connectRedis(REDIS_URL);
  connections.push(redis);
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis;
}

describe('with REDIS_URL', () => {
  before(async () => {
    if (!REDIS_URL) return;
    redisApp = await instance(createRateLimiter(await redisConnection()));
  });
  after(async () => {
    await redisApp?.close();
    const redis = connections[0];
    if (redis) {
      // Only this file's keys: every key id in this harness's fresh database.
      const { rows } = await h.ctx.db.query<{ id: string }>('SELECT id FROM api_keys');
      for (const { id } of rows) {
        const keys = await redis.keys(`safehold:rl:*:${id}`);
        if (keys.length > 0) await redis.del(...keys);
      }
    }
    for (const c of connections) c.disconnect();
  });

  rateLimitSuite(
    'rate limits in Redis',
    () => {
      if (!redisApp) throw new Error('no Redis app');
      return injectInto(() => redisApp as FastifyInstance);
    },
    () => (REDIS_URL ? undefined : 'REDIS_URL not set'),
  );

  it('shares one budget between two instances on one Redis', async (t) => {
    if (!REDIS_URL) {
      t.skip('REDIS_URL not set');
      return;
    }
    const a = await instance(createRateLimiter(await redisConnection()));
    const b = await instance(createRateLimiter(await redisConnection()));
    try {
      const m = await freshMerchant();
      const sendA = injectInto(() => a);
      const sendB = injectInto(() => b);
      assertRateHeaders(await sendA(m.test_key), LIMIT, 2);
      assertRateHeaders(await sendB(m.test_key), LIMIT, 1);
      assertRateHeaders(await sendA(m.test_key), LIMIT, 0);
      assertLimited(await sendB(m.test_key), LIMIT);
      assertLimited(await sendA(m.test_key), LIMIT);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('without Redis', () => {
  it('keeps separate budgets for two in-process instances (why Redis is needed)', async () => {
    const a = await instance(createRateLimiter());
    const b = await instance(createRateLimiter());
    try {
      const m = await freshMerchant();
      for (let i = 0; i < LIMIT; i++) assert.equal((await injectInto(() => a)(m.test_key)).statusCode, 200);
      assertLimited(await injectInto(() => a)(m.test_key), LIMIT);
      assert.equal((await injectInto(() => b)(m.test_key)).statusCode, 200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('falls back to in-process limits when Redis cannot be reached', async () => {
    // A real client pointed at a port where nothing listens: every Redis command fails at once.
    const dead = connectRedis('redis://127.0.0.1:1');
    dead.on('error', () => {});
    const app = await instance(createRateLimiter(dead));
    try {
      const m = await freshMerchant();
      for (let i = 1; i <= LIMIT; i++) {
        const res = await injectInto(() => app)(m.test_key);
        assert.equal(res.statusCode, 200, res.body);
        assertRateHeaders(res, LIMIT, LIMIT - i);
      }
      assertLimited(await injectInto(() => app)(m.test_key), LIMIT);
    } finally {
      await app.close();
      dead.disconnect();
    }
  });
});

describe('the default limit', () => {
  it('is 60 requests a minute per key when nothing is configured', async () => {
    const app = await buildApp({
      ctx: h.ctx,
      rateLimiter: createRateLimiter(),
      defaultRateLimitPerMinute: loadConfig({}).rateLimitPerMinute,
      logger: false,
    });
    try {
      const m = await freshMerchant();
      const res = await injectInto(() => app)(m.test_key);
      assertRateHeaders(res, 60, 59);
    } finally {
      await app.close();
    }
  });
});
