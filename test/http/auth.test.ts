import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKey, revokeKey } from '../../src/operations/manage-keys.ts';
import { setMerchantVerification } from '../../src/operations/manage-merchants.ts';
import {
  assertBearerChallenge,
  assertErrorEnvelope,
  commonAuthTests,
  type KeyedRoute,
} from '../helpers/common-auth.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const harness = () => h;

const createRoute: KeyedRoute = {
  method: 'POST',
  url: '/v1/transactions',
  payload: { amount: 250, title: 'Auth check' },
  scope: 'transactions:write',
  okStatus: 201,
};
const retrieveRoute: KeyedRoute = {
  method: 'GET',
  label: '/v1/transactions/:id',
  url: async (harness) => {
    const res = await harness.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 10, title: 'To read' },
    });
    assert.equal(res.statusCode, 201, res.body);
    return `/v1/transactions/${json(res).service_transaction_id}`;
  },
  scope: 'transactions:read',
  okStatus: 200,
};
const listRoute: KeyedRoute = {
  method: 'GET',
  url: '/v1/transactions',
  scope: 'transactions:read',
  okStatus: 200,
};

commonAuthTests(harness, createRoute);
commonAuthTests(harness, retrieveRoute);
commonAuthTests(harness, listRoute);

describe('authentication failures', () => {
  const cases: { name: string; headers: Record<string, string>; message: RegExp }[] = [
    { name: 'a missing Authorization header', headers: {}, message: /No API key provided/ },
    {
      name: 'a non-Bearer scheme',
      headers: { authorization: 'Basic c2tfdGVzdF94eHg6' },
      message: /Malformed Authorization header/,
    },
    {
      name: 'a malformed key',
      headers: { authorization: 'Bearer sk_test_tooshort' },
      message: /Malformed API key/,
    },
    {
      name: 'an unknown key',
      headers: { authorization: `Bearer sk_live_${'z'.repeat(40)}` },
      message: /^Invalid API key\.$/,
    },
  ];
  for (const c of cases) {
    it(`answers ${c.name} with 401 invalid_api_key in the full envelope`, async () => {
      const res = await h.request({ method: 'GET', url: '/v1/transactions', key: null, headers: c.headers });
      const error = assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
      assert.match(error.message, c.message);
      assertBearerChallenge(res);
    });
  }

  it('accepts the Bearer scheme in any letter case, as HTTP schemes are case-insensitive', async () => {
    const res = await h.request({
      method: 'GET',
      url: '/v1/transactions',
      key: null,
      headers: { authorization: `bearer ${h.merchant.test_key}` },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('tells a revoked key apart in the message and refuses it at once', async () => {
    const issued = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const ok = await h.request({ method: 'GET', url: '/v1/transactions', key: issued.key });
    assert.equal(ok.statusCode, 200);
    await revokeKey(h.ctx, issued.key_id);
    const res = await h.request({ method: 'GET', url: '/v1/transactions', key: issued.key });
    const error = assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
    assert.match(error.message, /revoked/);
  });

  it('stores only a hash of each key, never the key itself', async () => {
    const issued = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const { rows } = await h.ctx.db.query('SELECT * FROM api_keys WHERE id = $1', [issued.key_id]);
    assert.equal(rows.length, 1);
    const stored = JSON.stringify(rows[0]);
    assert.ok(!stored.includes(issued.key), 'the full key is stored');
    assert.ok(!stored.includes(issued.key.slice(8, 30)), 'a large part of the key is stored');
  });
});

describe('X-Request-Id', () => {
  it('is on every response, 2xx and error alike, and errors repeat it', async () => {
    const responses = [
      await h.request({ method: 'GET', url: '/healthz', key: null }),
      await h.request({ method: 'GET', url: '/v1/transactions' }),
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 1, title: 'x' } }),
      await h.request({ method: 'GET', url: '/v1/transactions', key: null }),
      await h.request({ method: 'GET', url: '/v1/no-such-route', key: null }),
      await h.request({ method: 'DELETE', url: '/v1/transactions', key: null }),
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: -1 } }),
    ];
    const ids = new Set<string>();
    for (const res of responses) {
      const id = String(res.headers['x-request-id']);
      assert.match(id, /^req_[0-9A-Za-z]+$/, `${res.statusCode} without X-Request-Id`);
      ids.add(id);
      if (res.statusCode >= 400)
        assert.equal(json<{ error: { request_id: string } }>(res).error.request_id, id);
    }
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      [200, 200, 201, 401, 404, 405, 400],
    );
    assert.equal(ids.size, responses.length, 'request ids are not unique');
  });

  it('is chosen by the service, not taken from the client', async () => {
    const res = await h.request({
      method: 'GET',
      url: '/v1/transactions',
      headers: { 'x-request-id': 'req_client_chosen' },
    });
    assert.notEqual(res.headers['x-request-id'], 'req_client_chosen');
    assert.match(String(res.headers['x-request-id']), /^req_/);
  });
});

describe('scopes', () => {
  it('refuses a write to a key with only transactions:read and lets it read', async () => {
    const readOnly = await createKey(h.ctx, {
      merchantId: h.merchant.merchant_id,
      env: 'test',
      scopes: ['transactions:read'],
    });
    const write = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: readOnly.key,
      payload: { amount: 100, title: 'Not allowed', merchant_reference: 'scope-refused' },
    });
    const error = assertErrorEnvelope(write, 403, 'insufficient_permissions', 'permission_denied');
    assert.match(error.message, /transactions:write/);

    const created = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 5, title: 'Mine' },
    });
    const id = String(json(created).service_transaction_id);
    const read = await h.request({ method: 'GET', url: `/v1/transactions/${id}`, key: readOnly.key });
    assert.equal(read.statusCode, 200);
    assert.equal(json(read).service_transaction_id, id);
    const list = await h.request({
      method: 'GET',
      url: '/v1/transactions?merchant_reference=scope-refused',
      key: readOnly.key,
    });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(json(list).data, [], 'the refused write created a transaction');
  });
});

describe('live mode before and after business verification', () => {
  it('refuses the live key on every merchant route until the merchant is verified, then serves live objects', async () => {
    const m = await h.newMerchant();
    const test = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: m.test_key,
      payload: { amount: 3, title: 'Test' },
    });
    assert.equal(test.statusCode, 201, 'the test key works before verification');
    const testId = String(json(test).service_transaction_id);

    const routes = [
      { method: 'POST' as const, url: '/v1/transactions', payload: { amount: 9, title: 'Live' } },
      { method: 'GET' as const, url: `/v1/transactions/${testId}` },
      { method: 'GET' as const, url: '/v1/transactions' },
    ];
    for (const route of routes) {
      const res = await h.request({ ...route, key: m.live_key });
      const error = assertErrorEnvelope(res, 403, 'permission_denied', 'permission_denied');
      assert.match(error.message, /verification/);
    }

    await setMerchantVerification(h.ctx, m.merchant_id, 'verified');
    const created = await h.request({ ...routes[0], key: m.live_key });
    assert.equal(created.statusCode, 201, created.body);
    const live = json(created);
    assert.equal(live.livemode, true);
    const read = await h.request({
      method: 'GET',
      url: `/v1/transactions/${live.service_transaction_id}`,
      key: m.live_key,
    });
    assert.equal(read.statusCode, 200);
    assert.equal(json(read).livemode, true);
    const list = await h.request({ method: 'GET', url: '/v1/transactions', key: m.live_key });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      json<{ data: { service_transaction_id: string }[] }>(list).data.map((t) => t.service_transaction_id),
      [live.service_transaction_id],
    );

    // Verification is read on every request: withdrawing it refuses the live key again.
    await setMerchantVerification(h.ctx, m.merchant_id, 'rejected');
    const again = await h.request({ method: 'GET', url: '/v1/transactions', key: m.live_key });
    assertErrorEnvelope(again, 403, 'permission_denied', 'permission_denied');
  });

  it('gives test-mode objects livemode false', async () => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 3, title: 'T' },
    });
    assert.equal(json(res).livemode, false);
  });
});
