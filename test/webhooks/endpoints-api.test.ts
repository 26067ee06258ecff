import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKey } from '../../src/operations/manage-keys.ts';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

interface Endpoint {
  object: string;
  id: string;
  url: string;
  enabled_events: string[];
  status: string;
  failing: boolean;
  failing_since: string | null;
  last_alert_at: string | null;
  livemode: boolean;
  secret?: string;
}

describe('webhook endpoints API', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const create = (payload: unknown, key?: string) =>
    h.request({ method: 'POST', url: '/v1/webhook_endpoints', payload: payload as object, key });

  it('creates an endpoint (201) and shows the signing secret once, never on reads', async () => {
    const res = await create({ url: 'https://example.com/hooks', enabled_events: ['transaction.paid'] });
    assert.equal(res.statusCode, 201, res.body);
    const endpoint = json<Endpoint>(res);
    assert.equal(endpoint.object, 'webhook_endpoint');
    assert.match(endpoint.id, /^we_/);
    assert.equal(endpoint.url, 'https://example.com/hooks');
    assert.deepEqual(endpoint.enabled_events, ['transaction.paid']);
    assert.equal(endpoint.status, 'enabled');
    assert.equal(endpoint.failing, false);
    assert.equal(endpoint.last_alert_at, null);
    assert.equal(endpoint.livemode, false);
    assert.match(String(endpoint.secret), /^whsec_[A-Za-z0-9]{32,}$/);

    const read = json<Endpoint>(
      await h.request({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}` }),
    );
    assert.equal(read.secret, undefined);
    assert.equal(read.id, endpoint.id);
    const list = json<{ data: Endpoint[] }>(await h.request({ method: 'GET', url: '/v1/webhook_endpoints' }));
    assert.ok(list.data.every((e) => e.secret === undefined));

    const second = json<Endpoint>(await create({ url: 'https://example.com/other' }));
    assert.deepEqual(second.enabled_events, ['*'], 'default: every event type');
    assert.equal(second.secret, endpoint.secret, 'one secret per merchant and environment');
  });

  it('replays a create with the same idempotency key (200, same endpoint) and refuses another body (409)', async () => {
    const headers = { 'idempotency-key': 'create-endpoint-1' };
    const first = await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers,
      payload: { url: 'https://example.com/idem' },
    });
    assert.equal(first.statusCode, 201);
    const again = await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers,
      payload: { url: 'https://example.com/idem' },
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(json(again).id, json(first).id);
    const other = await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      headers,
      payload: { url: 'https://example.com/else' },
    });
    assertErrorEnvelope(other, 409, 'conflict', 'conflict');
  });

  it('refuses bad URLs and event types with 400 naming the field', async () => {
    for (const [payload, param] of [
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: 'https://user:pw@example.com/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{}, 'url'],
      [{ url: 'https://example.com', enabled_events: ['transaction.exploded'] }, 'enabled_events.0'],
      [{ url: 'https://example.com', enabled_events: [] }, 'enabled_events'],
      [{ url: 'https://example.com', enabled_events: ['*', 'transaction.paid'] }, 'enabled_events'],
      [{ url: 'https://example.com', colour: 'blue' }, 'colour'],
    ] as const) {
      const res = await create(payload);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, JSON.stringify(payload));
    }
  });

  it('refuses a live-mode URL that resolves to loopback, private or link-local addresses', async () => {
    const verified = await h.newMerchant({ verified: true });
    for (const url of [
      'https://127.0.0.1/hooks',
      'https://localhost/hooks',
      'https://10.1.2.3/hooks',
      'https://169.254.169.254/latest',
      'https://[::1]/hooks',
    ]) {
      const res = await create({ url }, verified.live_key);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, 'url');
      assert.match(error.message, /public address/);
    }
    const http = await create({ url: 'http://93.184.216.34/hooks' }, verified.live_key);
    assert.match(assertErrorEnvelope(http, 400, 'invalid_request', 'invalid_request').message, /https/);
    const ok = await create({ url: 'https://93.184.216.34/hooks' }, verified.live_key);
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(json(ok).livemode, true);
    const updated = await h.request({
      method: 'POST',
      url: `/v1/webhook_endpoints/${json(ok).id}`,
      key: verified.live_key,
      payload: { url: 'https://192.168.1.1/x' },
    });
    assert.equal(assertErrorEnvelope(updated, 400, 'invalid_request', 'invalid_request').param, 'url');
  });

  it('updates url, event types and disabled, and deletes (then 404)', async () => {
    const endpoint = json<Endpoint>(await create({ url: 'https://example.com/a' }));
    const res = await h.request({
      method: 'POST',
      url: `/v1/webhook_endpoints/${endpoint.id}`,
      payload: { url: 'https://example.com/b', enabled_events: ['transaction.created'], disabled: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    const updated = json<Endpoint>(res);
    assert.equal(updated.url, 'https://example.com/b');
    assert.deepEqual(updated.enabled_events, ['transaction.created']);
    assert.equal(updated.status, 'disabled');
    const enabled = json<Endpoint>(
      await h.request({
        method: 'POST',
        url: `/v1/webhook_endpoints/${endpoint.id}`,
        payload: { disabled: false },
      }),
    );
    assert.equal(enabled.status, 'enabled');
    assert.equal(enabled.url, 'https://example.com/b');

    const deleted = await h.request({ method: 'DELETE', url: `/v1/webhook_endpoints/${endpoint.id}` });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(json(deleted), { object: 'webhook_endpoint', id: endpoint.id, deleted: true });
    for (const res of [
      await h.request({ method: 'GET', url: `/v1/webhook_endpoints/${endpoint.id}` }),
      await h.request({ method: 'DELETE', url: `/v1/webhook_endpoints/${endpoint.id}` }),
      await h.request({ method: 'POST', url: `/v1/webhook_endpoints/${endpoint.id}`, payload: {} }),
    ]) {
      assertErrorEnvelope(res, 404, 'not_found', 'not_found');
    }
    const list = json<{ data: Endpoint[] }>(await h.request({ method: 'GET', url: '/v1/webhook_endpoints' }));
    assert.ok(!list.data.some((e) => e.id === endpoint.id));
  });

  it('lists newest first with cursors, and keeps merchants and environments apart', async () => {
    const merchant = await h.newMerchant({ verified: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      h.clock.advance(0.001); // ids sort by creation time; the manual clock otherwise stands still
      ids.push(json<Endpoint>(await create({ url: `https://example.com/${i}` }, merchant.test_key)).id);
    }
    const page1 = json<{ data: Endpoint[]; has_more: boolean }>(
      await h.request({ method: 'GET', url: '/v1/webhook_endpoints?limit=2', key: merchant.test_key }),
    );
    assert.deepEqual(
      page1.data.map((e) => e.id),
      [ids[2], ids[1]],
    );
    assert.equal(page1.has_more, true);
    const page2 = json<{ data: Endpoint[]; has_more: boolean }>(
      await h.request({
        method: 'GET',
        url: `/v1/webhook_endpoints?limit=2&starting_after=${ids[1]}`,
        key: merchant.test_key,
      }),
    );
    assert.deepEqual(
      page2.data.map((e) => e.id),
      [ids[0]],
    );
    assert.equal(page2.has_more, false);
    const back = json<{ data: Endpoint[] }>(
      await h.request({
        method: 'GET',
        url: `/v1/webhook_endpoints?limit=2&ending_before=${ids[0]}`,
        key: merchant.test_key,
      }),
    );
    assert.deepEqual(
      back.data.map((e) => e.id),
      [ids[2], ids[1]],
    );
    const live = json<{ data: Endpoint[] }>(
      await h.request({ method: 'GET', url: '/v1/webhook_endpoints', key: merchant.live_key }),
    );
    assert.equal(live.data.length, 0, 'test endpoints are not in live mode');
    const stranger = await h.request({ method: 'GET', url: `/v1/webhook_endpoints/${ids[0]}` });
    assertErrorEnvelope(stranger, 404, 'not_found', 'not_found');
  });

  it('rotates the secret: a new one, shown once, different from the old', async () => {
    const merchant = await h.newMerchant();
    const first = json<Endpoint>(await create({ url: 'https://example.com/r' }, merchant.test_key));
    const res = await h.request({ method: 'POST', url: '/v1/webhook_secret/rotate', key: merchant.test_key });
    assert.equal(res.statusCode, 200, res.body);
    const rotated = json<{ object: string; secret: string; livemode: boolean }>(res);
    assert.equal(rotated.object, 'webhook_secret');
    assert.match(rotated.secret, /^whsec_[A-Za-z0-9]{32,}$/);
    assert.notEqual(rotated.secret, first.secret);
    const next = json<Endpoint>(await create({ url: 'https://example.com/r2' }, merchant.test_key));
    assert.equal(next.secret, rotated.secret);
  });

  it('publishes the egress ranges from configuration', async () => {
    const res = await h.request({ method: 'GET', url: '/v1/webhook_egress_ranges' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), {
      object: 'webhook_egress_ranges',
      ranges: ['192.0.2.0/24', '198.51.100.0/24'],
    });
  });

  it('gives a key without webhooks:write no access to endpoints', async () => {
    const issued = await createKey(h.ctx, {
      merchantId: h.merchant.merchant_id,
      env: 'test',
      scopes: ['events:read'],
    });
    const res = await create({ url: 'https://example.com/x' }, issued.key);
    assertErrorEnvelope(res, 403, 'insufficient_permissions', 'permission_denied');
  });

  const endpointUrl = async (x: Harness) =>
    `/v1/webhook_endpoints/${json(await x.request({ method: 'POST', url: '/v1/webhook_endpoints', payload: { url: 'https://example.com/auth' } })).id}`;

  commonAuthTests(() => h, {
    method: 'POST',
    url: '/v1/webhook_endpoints',
    payload: { url: 'https://example.com/auth' },
    scope: 'webhooks:write',
    okStatus: 201,
  });
  commonAuthTests(() => h, { method: 'GET', url: '/v1/webhook_endpoints', scope: 'webhooks:write' });
  commonAuthTests(() => h, {
    method: 'GET',
    url: endpointUrl,
    label: 'GET /v1/webhook_endpoints/:id',
    scope: 'webhooks:write',
  });
  commonAuthTests(() => h, {
    method: 'POST',
    url: endpointUrl,
    label: 'POST /v1/webhook_endpoints/:id',
    payload: { disabled: false },
    scope: 'webhooks:write',
  });
  // A delete succeeds once; after the auth checks an unknown id is the handler's 404.
  commonAuthTests(() => h, {
    method: 'DELETE',
    url: '/v1/webhook_endpoints/we_0000000000000000000000000',
    label: 'DELETE /v1/webhook_endpoints/:id',
    scope: 'webhooks:write',
    okStatus: 404,
  });
  commonAuthTests(() => h, { method: 'POST', url: '/v1/webhook_secret/rotate', scope: 'webhooks:write' });
  commonAuthTests(() => h, { method: 'GET', url: '/v1/webhook_egress_ranges', scope: 'webhooks:write' });
  commonAuthTests(() => h, { method: 'GET', url: '/v1/webhook_callback_targets', scope: 'webhooks:write' });
});
