import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Scope } from '../../src/domain/api-keys.ts';
import { SCOPES } from '../../src/domain/api-keys.ts';
import { createKey, createOperatorKey, revokeKey } from '../../src/operations/manage-keys.ts';
import type { Harness } from './harness.ts';

/**
 * The auth checks every keyed route must pass (after unkey's pkg/testutil/common-tests.ts):
 * call commonAuthTests inside a file that owns a harness, once per route.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KeyedRoute {
  method: Method;
  /** The URL, or a function that prepares what the route needs (e.g. an object to read) and returns it. */
  url: string | ((h: Harness) => Promise<string> | string);
  /** Shown in test names when url is a function, e.g. 'GET /v1/transactions/:id'. */
  label?: string;
  payload?: unknown;
  /** The scope the route requires. */
  scope: Scope;
  /** Status a test key of the harness merchant holding only `scope` gets (default: any 2xx). */
  okStatus?: number;
}

export interface ErrorBody {
  error: { code: string; message: string; request_id: string; type: string; param?: string };
}

/**
 * Asserts the error envelope exactly: status, code, type, a message, and a request_id equal to the
 * X-Request-Id header. No other keys than code, message, request_id, type and (optionally) param.
 */
export function assertErrorEnvelope(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  type: string,
): ErrorBody['error'] {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json() as ErrorBody;
  assert.deepEqual(Object.keys(body), ['error']);
  const keys = Object.keys(body.error).sort();
  const expected = ['code', 'message', 'request_id', 'type'];
  assert.deepEqual(
    keys.filter((k) => k !== 'param'),
    expected,
    `unexpected envelope keys: ${keys.join(',')}`,
  );
  assert.equal(body.error.code, code);
  assert.equal(body.error.type, type);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0, 'message is empty');
  assert.match(String(res.headers['x-request-id']), /^req_/);
  assert.equal(body.error.request_id, res.headers['x-request-id']);
  return body.error;
}

/** A 401 for a bad key names the Bearer scheme (RFC 9110 11.6.1). */
export function assertBearerChallenge(res: LightMyRequestResponse): void {
  assert.match(String(res.headers['www-authenticate']), /^Bearer realm="safehold"$/);
}

function hasNoRateLimitCost(res: LightMyRequestResponse): void {
  // 401s come before the key is known, so they carry no RateLimit-* headers.
  assert.equal(res.headers['ratelimit-limit'], undefined);
}

/**
 * Registers, inside the caller's describe, one test per auth rule for a keyed route. `harness`
 * is read lazily because the caller starts it in a before() hook.
 */
export function commonAuthTests(harness: () => Harness, route: KeyedRoute): void {
  const label = route.label ?? (typeof route.url === 'string' ? route.url : 'route');
  describe(`${route.method} ${label}: common auth checks`, () => {
    let url = '';
    before(async () => {
      url = typeof route.url === 'string' ? route.url : await route.url(harness());
    });

    const send = (key: string | null, extra: Partial<InjectOptions> = {}) =>
      harness().request({
        method: route.method,
        url,
        ...(route.payload === undefined ? {} : { payload: route.payload as InjectOptions['payload'] }),
        key,
        ...extra,
      });

    const keyWith = async (scopes: readonly Scope[], env: 'test' | 'live' = 'test', merchantId?: string) => {
      const h = harness();
      const issued = await createKey(h.ctx, {
        merchantId: merchantId ?? h.merchant.merchant_id,
        env,
        scopes,
      });
      return issued;
    };

    it('answers 401 invalid_api_key when the Authorization header is missing', async () => {
      const res = await send(null);
      assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
      assertBearerChallenge(res);
      hasNoRateLimitCost(res);
    });

    it('answers 401 invalid_api_key to a scheme other than Bearer', async () => {
      const key = harness().merchant.test_key;
      for (const header of [`Basic ${Buffer.from(`${key}:`).toString('base64')}`, key, `Token ${key}`]) {
        const res = await send(null, { headers: { authorization: header } });
        assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
      }
    });

    it('answers 401 invalid_api_key to a malformed key', async () => {
      for (const key of [
        'sk_test_short',
        'pk_test_0123456789abcdef0123456789abcdef',
        'sk_test_abc!@#$%^&*()abc-0123456789abcdef',
      ]) {
        const res = await send(key);
        assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
      }
    });

    it('answers 401 invalid_api_key to a well-formed key that was never issued', async () => {
      const res = await send(`sk_test_${'A'.repeat(40)}`);
      assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
      assertBearerChallenge(res);
      hasNoRateLimitCost(res);
    });

    it('answers 401 invalid_api_key to a key as soon as it is revoked', async () => {
      const issued = await keyWith(SCOPES);
      const before = await send(issued.key);
      assert.notEqual(before.statusCode, 401, `the key should work before it is revoked: ${before.body}`);
      await revokeKey(harness().ctx, issued.key_id);
      const res = await send(issued.key);
      assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
    });

    it(`answers 403 insufficient_permissions to a key without the ${route.scope} scope`, async () => {
      const issued = await keyWith(SCOPES.filter((s) => s !== route.scope));
      const res = await send(issued.key);
      const error = assertErrorEnvelope(res, 403, 'insufficient_permissions', 'permission_denied');
      assert.match(error.message, new RegExp(route.scope));
    });

    it(`lets through a key holding only the ${route.scope} scope`, async () => {
      const issued = await keyWith([route.scope]);
      const res = await send(issued.key);
      if (route.okStatus !== undefined) assert.equal(res.statusCode, route.okStatus, res.body);
      else assert.ok(res.statusCode >= 200 && res.statusCode < 300, res.body);
    });

    it('answers 403 permission_denied to the live key of an unverified merchant', async () => {
      const other = await harness().newMerchant();
      const res = await send(other.live_key);
      assertErrorEnvelope(res, 403, 'permission_denied', 'permission_denied');
    });

    it('answers 403 permission_denied to the operator key', async () => {
      const operator = await createOperatorKey(harness().ctx);
      const res = await send(operator.key);
      assertErrorEnvelope(res, 403, 'permission_denied', 'permission_denied');
    });

    it('checks the key before it reads or validates the body', async () => {
      const res = await send(null, {
        payload: '{"not json',
        headers: { 'content-type': 'application/json' },
      });
      assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
    });
  });
}
