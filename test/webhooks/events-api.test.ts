import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { runDueWebhooks } from '../../src/worker/run-due-webhooks.ts';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from './receiver.ts';

interface EventItem {
  object: string;
  id: string;
  type: string;
  service_transaction_id: string;
  livemode: boolean;
  created_at: string;
  payload: Record<string, unknown>;
  delivery_failed: boolean;
  deliveries: { status: string; attempts?: unknown[] }[];
}

describe('events API', () => {
  let h: Harness;
  let r: Receiver;
  before(async () => {
    h = await startHarness();
    r = await startReceiver();
  });
  after(async () => {
    await r.close();
    await h.close();
  });

  const list = async (merchant: CreatedMerchant, query = '') =>
    json<{ object: string; data: EventItem[]; has_more: boolean }>(
      await h.request({ method: 'GET', url: `/v1/events${query}`, key: merchant.test_key }),
    );

  const createTransaction = async (merchant: CreatedMerchant, body: Record<string, unknown> = {}) => {
    h.clock.advance(0.001); // ids sort by creation time; the manual clock otherwise stands still
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: { amount: 10, title: 'Pen', ...body },
    });
    return String(json(res).service_transaction_id);
  };

  it('lists events newest first, filtered by type and service_transaction_id, with cursors', async () => {
    const merchant = await h.newMerchant();
    const a = await createTransaction(merchant, { merchant_order_id: 'A-1' });
    const b = await createTransaction(merchant);
    h.clock.advance(0.001);
    await h.request({ method: 'POST', url: `/v1/transactions/${a}/cancel`, key: merchant.test_key });

    const all = await list(merchant);
    assert.equal(all.object, 'list');
    assert.deepEqual(
      all.data.map((e) => [e.type, e.service_transaction_id]),
      [
        ['transaction.status_changed', a],
        ['transaction.created', b],
        ['transaction.created', a],
      ],
    );
    const first = all.data[2];
    assert.equal(first?.object, 'event');
    assert.match(String(first?.id), /^evt_/);
    assert.equal(first?.livemode, false);
    assert.equal(first?.payload.event_id, first?.id);
    assert.equal(first?.payload.merchant_order_id, 'A-1');
    const data = first?.payload.data as Record<string, unknown>;
    assert.match(String(data.payment_link), /^http:\/\/localhost:3000\/pay\//, 'links rebuilt on read');
    assert.equal(JSON.stringify(first).includes('_links'), false);

    assert.deepEqual(
      (await list(merchant, '?type=transaction.status_changed')).data.map((e) => e.service_transaction_id),
      [a],
    );
    assert.deepEqual(
      (await list(merchant, `?service_transaction_id=${a}`)).data.map((e) => e.type),
      ['transaction.status_changed', 'transaction.created'],
    );
    const page = await list(merchant, '?limit=2');
    assert.equal(page.has_more, true);
    const rest = await list(merchant, `?limit=2&starting_after=${page.data[1]?.id}`);
    assert.deepEqual(
      rest.data.map((e) => e.id),
      [first?.id],
    );
    assert.equal(rest.has_more, false);
    const back = await list(merchant, `?limit=2&ending_before=${first?.id}`);
    assert.deepEqual(
      back.data.map((e) => e.id),
      page.data.map((e) => e.id),
    );
    const bad = await h.request({ method: 'GET', url: '/v1/events?type=nope', key: merchant.test_key });
    assert.equal(assertErrorEnvelope(bad, 400, 'invalid_request', 'invalid_request').param, 'type');
  });

  it('keeps other merchants and environments out', async () => {
    const merchant = await h.newMerchant({ verified: true });
    await createTransaction(merchant);
    const [event] = (await list(merchant)).data;
    assert.ok(event);
    const other = await h.request({ method: 'GET', url: `/v1/events/${event.id}` });
    assertErrorEnvelope(other, 404, 'not_found', 'not_found');
    const live = await h.request({ method: 'GET', url: `/v1/events/${event.id}`, key: merchant.live_key });
    assertErrorEnvelope(live, 404, 'not_found', 'not_found');
    const redeliver = await h.request({ method: 'POST', url: `/v1/events/${event.id}/redeliver` });
    assertErrorEnvelope(redeliver, 404, 'not_found', 'not_found');
    assert.equal(
      (await list(h.merchant)).data.some((e) => e.id === event.id),
      false,
    );
  });

  it('shows an event with its delivery attempts', async () => {
    const merchant = await h.newMerchant();
    await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      key: merchant.test_key,
      payload: { url: r.url },
    });
    await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    const [item] = (await list(merchant)).data;
    assert.equal(item?.deliveries[0]?.status, 'succeeded');
    assert.equal(item?.deliveries[0]?.attempts, undefined, 'the list leaves attempts out');
    const event = json<{
      deliveries: {
        object: string;
        target: string;
        webhook_endpoint: string;
        url: string;
        attempts_made: number;
        next_attempt_at: null;
        attempts: Record<string, unknown>[];
      }[];
    }>(await h.request({ method: 'GET', url: `/v1/events/${item?.id}`, key: merchant.test_key }));
    const delivery = event.deliveries[0];
    assert.equal(delivery?.object, 'webhook_delivery');
    assert.equal(delivery?.target, 'webhook_endpoint');
    assert.match(String(delivery?.webhook_endpoint), /^we_/);
    assert.equal(delivery?.url, r.url);
    assert.equal(delivery?.attempts_made, 1);
    assert.equal(delivery?.next_attempt_at, null);
    const attempt = delivery?.attempts[0];
    assert.equal(attempt?.number, 1);
    assert.equal(attempt?.status_code, 200);
    assert.equal(attempt?.succeeded, true);
    assert.equal(attempt?.response_excerpt, 'ok');
    assert.equal(attempt?.error, null);
    assert.equal(typeof attempt?.latency_ms, 'number');
    assert.match(String(attempt?.attempted_at), /Z$/);
  });

  it('redelivers an already delivered event once more, with an idempotency key replayed', async () => {
    const merchant = await h.newMerchant();
    await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      key: merchant.test_key,
      payload: { url: r.url },
    });
    await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    const [event] = (await list(merchant)).data;
    const headers = { 'idempotency-key': 'again-1' };
    const first = await h.request({
      method: 'POST',
      url: `/v1/events/${event?.id}/redeliver`,
      key: merchant.test_key,
      headers,
    });
    assert.equal(first.statusCode, 200, first.body);
    const replay = await h.request({
      method: 'POST',
      url: `/v1/events/${event?.id}/redeliver`,
      key: merchant.test_key,
      headers,
    });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const before = r.received.length;
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, before + 1, 'sent once more');
    const after = json<EventItem>(
      await h.request({ method: 'GET', url: `/v1/events/${event?.id}`, key: merchant.test_key }),
    );
    assert.deepEqual(
      after.deliveries.map((d) => d.status),
      ['succeeded', 'succeeded'],
    );
  });

  it('purges events and their deliveries 30 days after they happened, on the merchant clock', async () => {
    const merchant = await h.newMerchant();
    await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      key: merchant.test_key,
      payload: { url: r.url },
    });
    const old = await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    await h.request({
      method: 'POST',
      url: '/v1/test_helpers/clock/advance',
      key: merchant.test_key,
      payload: { seconds: 20 * 86_400 },
    });
    const recent = await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    const before = (await list(merchant)).data.filter((e) => e.type === 'transaction.created');
    assert.deepEqual(
      before.map((e) => e.service_transaction_id),
      [recent, old],
    );
    const oldEvent = before[1]?.id;

    await h.request({
      method: 'POST',
      url: '/v1/test_helpers/clock/advance',
      key: merchant.test_key,
      payload: { seconds: 10 * 86_400 + 60 },
    });
    const after = (await list(merchant, '?limit=100')).data;
    assert.equal(
      after.some((e) => e.id === oldEvent),
      false,
      'the 30-day-old event is gone',
    );
    assert.ok(after.some((e) => e.service_transaction_id === recent && e.type === 'transaction.created'));
    const gone = await h.request({ method: 'GET', url: `/v1/events/${oldEvent}`, key: merchant.test_key });
    assertErrorEnvelope(gone, 404, 'not_found', 'not_found');
    const { rows } = await h.ctx.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = $1',
      [oldEvent],
    );
    assert.equal(Number(rows[0]?.n), 0, 'with their deliveries');
  });

  const eventUrl =
    (suffix = '') =>
    async (x: Harness) => {
      await x.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 5, title: 'Auth' } });
      const res = await x.request({ method: 'GET', url: '/v1/events?limit=1' });
      return `/v1/events/${json<{ data: { id: string }[] }>(res).data[0]?.id}${suffix}`;
    };
  commonAuthTests(() => h, { method: 'GET', url: '/v1/events', scope: 'events:read' });
  commonAuthTests(() => h, {
    method: 'GET',
    url: eventUrl(),
    label: 'GET /v1/events/:id',
    scope: 'events:read',
  });
  commonAuthTests(() => h, {
    method: 'POST',
    url: eventUrl('/redeliver'),
    label: 'POST /v1/events/:id/redeliver',
    scope: 'webhooks:write',
  });
});
