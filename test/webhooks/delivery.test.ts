import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { runDueWebhooks } from '../../src/worker/run-due-webhooks.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from './receiver.ts';

/** The signature as a receiver computes it, with node:crypto only (not the service's signer). */
function expectedSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

interface EventBody {
  event_id: string;
  event_type: string;
  [field: string]: unknown;
}

describe('webhook delivery', () => {
  let h: Harness;
  const receivers: Receiver[] = [];

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await h.close();
  });

  async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }

  /** A fresh merchant (so endpoints of other tests do not see its events) with one endpoint. */
  async function merchantWithEndpoint(url: string, body: Record<string, unknown> = {}) {
    const merchant = await h.newMerchant();
    const res = await h.request({
      method: 'POST',
      url: '/v1/webhook_endpoints',
      key: merchant.test_key,
      payload: { url, ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    const endpoint = json<{ id: string; secret: string }>(res);
    return { merchant, endpoint };
  }

  async function createTransaction(merchant: CreatedMerchant, body: Record<string, unknown> = {}) {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: { amount: 1500.5, title: 'Used phone', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return json<{ service_transaction_id: string; payment_link: string; buyer_link: string }>(res);
  }

  const advance = async (merchant: CreatedMerchant, seconds: number) => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/test_helpers/clock/advance',
      key: merchant.test_key,
      payload: { seconds },
    });
    assert.equal(res.statusCode, 200, res.body);
  };

  const eventOf = (r: Receiver, type: string) =>
    r.received.map((q) => JSON.parse(q.body) as EventBody).find((e) => e.event_type === type);

  it('signs each status change with the secret (checked with node:crypto) and carries every spec 2.3 field', async () => {
    const r = await receiver();
    const { merchant, endpoint } = await merchantWithEndpoint(`${r.url}/hooks`);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9]{32,}$/);
    const txn = await createTransaction(merchant, {
      merchant_reference: 'order-1001',
      merchant_order_id: 'SO-77',
      currency: 'KES',
    });
    const paid = await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${txn.service_transaction_id}/pay`,
      key: merchant.test_key,
      payload: { method: 'card', card_number: '4242424242424242' },
    });
    assert.equal(json(paid).status, 'reserved');
    const attempts = await runDueWebhooks(h.ctx);
    assert.equal(attempts, 3, 'transaction.created, transaction.status_changed, transaction.paid');

    const request = r.received.find((q) => JSON.parse(q.body).event_type === 'transaction.status_changed');
    assert.ok(request, 'the status change was delivered');
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/hooks');
    assert.match(String(request.headers['content-type']), /^application\/json/);
    const timestamp = String(request.headers['x-service-timestamp']);
    assert.match(timestamp, /^\d+$/);
    assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 60, 'the real time of sending');
    assert.equal(
      request.headers['x-service-signature'],
      expectedSignature(endpoint.secret, timestamp, request.body),
    );
    assert.match(String(request.headers['x-service-signature']), /^sha256=[0-9a-f]{64}$/);

    const event = JSON.parse(request.body) as Record<string, unknown>;
    assert.equal(request.headers['x-service-event-id'], event.event_id);
    assert.match(String(event.event_id), /^evt_/);
    assert.equal(event.event_type, 'transaction.status_changed');
    assert.equal(event.service_transaction_id, txn.service_transaction_id);
    assert.equal(event.merchant_reference, 'order-1001');
    assert.equal(event.merchant_order_id, 'SO-77');
    assert.equal(event.previous_status, 'pending_payment');
    assert.equal(event.status, 'reserved');
    assert.equal(event.settlement_status, 'pending_confirmation');
    assert.equal(event.amount, 1500.5);
    assert.equal(event.currency, 'KES');
    assert.match(String(event.occurred_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const data = event.data as Record<string, unknown>;
    assert.equal(data.status, 'reserved');
    assert.equal(data.payment_link, txn.payment_link, 'link URLs rebuilt for delivery');
    assert.equal(data.buyer_link, txn.buyer_link);
    assert.equal(JSON.stringify(event).includes('_links'), false);

    const stored = json<{ payload: unknown; deliveries: { status: string; attempts: unknown[] }[] }>(
      await h.request({ method: 'GET', url: `/v1/events/${event.event_id}`, key: merchant.test_key }),
    );
    assert.deepEqual(stored.payload, event, 'the events API shows the payload as delivered');
    assert.equal(stored.deliveries[0]?.status, 'succeeded');
    assert.equal(stored.deliveries[0]?.attempts.length, 1);
  });

  it('retries after 60 s, 5 min, 30 min and 2 h on the test clock, and the fifth attempt gets it through', async () => {
    const r = await receiver((_, i) => (i < 4 ? { status: 500, body: `down ${i + 1}` } : { status: 200 }));
    const { merchant, endpoint } = await merchantWithEndpoint(r.url);
    const txn = await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, 1);

    for (const [wait, expected] of [
      [60, 2],
      [300, 3],
      [1800, 4],
      [7200, 5],
    ] as const) {
      await advance(merchant, wait - 1);
      assert.equal(r.received.length, expected - 1, `not before ${wait} s`);
      await advance(merchant, 1);
      assert.equal(r.received.length, expected, `attempt ${expected} after ${wait} s`);
    }
    await advance(merchant, 7200);
    assert.equal(r.received.length, 5, 'no attempt after a success');

    // Signed afresh each time, always with the real time (the merchant's clock is hours ahead).
    const last = r.received[4];
    assert.ok(last);
    const timestamp = String(last.headers['x-service-timestamp']);
    assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 60);
    assert.equal(
      last.headers['x-service-signature'],
      expectedSignature(endpoint.secret, timestamp, last.body),
    );
    assert.equal(new Set(r.received.map((q) => q.body)).size, 1, 'the same body every time');

    const events = json<{ data: { id: string }[] }>(
      await h.request({
        method: 'GET',
        url: `/v1/events?service_transaction_id=${txn.service_transaction_id}`,
        key: merchant.test_key,
      }),
    );
    const event = json<{
      deliveries: {
        status: string;
        attempts: { number: number; attempted_at: string; status_code: number; succeeded: boolean }[];
      }[];
    }>(await h.request({ method: 'GET', url: `/v1/events/${events.data[0]?.id}`, key: merchant.test_key }));
    const delivery = event.deliveries[0];
    assert.equal(delivery?.status, 'succeeded');
    assert.deepEqual(
      delivery?.attempts.map((a) => [a.number, a.status_code, a.succeeded]),
      [
        [1, 500, false],
        [2, 500, false],
        [3, 500, false],
        [4, 500, false],
        [5, 200, true],
      ],
    );
    const times = delivery?.attempts.map((a) => Date.parse(a.attempted_at)) ?? [];
    assert.deepEqual(
      times.slice(1).map((t, i) => (t - (times[i] as number)) / 1000),
      [60, 300, 1800, 7200],
    );
  });

  it('does not follow a redirect: a 302 is a failed attempt', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: `${target.url}/moved` } }));
    const { merchant } = await merchantWithEndpoint(r.url);
    await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, 1);
    assert.equal(target.received.length, 0, 'the Location was not requested');
    const list = json<{ data: { id: string }[] }>(
      await h.request({ method: 'GET', url: '/v1/events', key: merchant.test_key }),
    );
    const event = json<{
      deliveries: {
        status: string;
        next_attempt_at: string;
        attempts: { status_code: number; succeeded: boolean }[];
      }[];
    }>(await h.request({ method: 'GET', url: `/v1/events/${list.data[0]?.id}`, key: merchant.test_key }));
    assert.equal(event.deliveries[0]?.status, 'pending', 'retried later');
    assert.deepEqual(
      event.deliveries[0]?.attempts.map((a) => [a.status_code, a.succeeded]),
      [[302, false]],
    );
  });

  it('fails an attempt the receiver does not answer within the timeout', async () => {
    const r = await receiver(() => ({ status: 200, hang: true }));
    const { merchant } = await merchantWithEndpoint(r.url);
    const settings = h.ctx.webhooks;
    h.ctx.webhooks = {
      ...(settings ?? (await import('../../src/operations/webhook-settings.ts')).DEFAULT_WEBHOOK_SETTINGS),
      timeoutMs: 200,
    };
    try {
      await createTransaction(merchant);
      await runDueWebhooks(h.ctx);
    } finally {
      h.ctx.webhooks = settings;
      r.release();
    }
    const list = json<{ data: { id: string }[] }>(
      await h.request({ method: 'GET', url: '/v1/events', key: merchant.test_key }),
    );
    const event = json<{
      deliveries: { attempts: { status_code: number | null; error: string; succeeded: boolean }[] }[];
    }>(await h.request({ method: 'GET', url: `/v1/events/${list.data[0]?.id}`, key: merchant.test_key }));
    const attempt = event.deliveries[0]?.attempts[0];
    assert.equal(attempt?.succeeded, false);
    assert.equal(attempt?.status_code, null);
    assert.match(String(attempt?.error), /timed out after 200 ms/);
  });

  it("delivers a transaction's events to its callback_url and signs them with the environment's secret", async () => {
    const r = await receiver();
    const merchant = await h.newMerchant();
    const txn = await createTransaction(merchant, { callback_url: `${r.url}/cb?order=9` });
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, 1);
    assert.equal(r.received[0]?.path, '/cb?order=9');
    const rotated = json<{ secret: string }>(
      await h.request({ method: 'POST', url: '/v1/webhook_secret/rotate', key: merchant.test_key }),
    );
    await h.request({
      method: 'POST',
      url: `/v1/transactions/${txn.service_transaction_id}/cancel`,
      key: merchant.test_key,
    });
    await runDueWebhooks(h.ctx);
    const cancelled = r.received.at(-1);
    assert.ok(cancelled);
    assert.equal(JSON.parse(cancelled.body).status, 'cancelled');
    const timestamp = String(cancelled.headers['x-service-timestamp']);
    assert.equal(
      cancelled.headers['x-service-signature'],
      expectedSignature(rotated.secret, timestamp, cancelled.body),
      'signed with the rotated secret from then on',
    );
    assert.ok(eventOf(r, 'transaction.created'));
  });

  it('fails the attempt without sending when the stored secret cannot be read, until it is rotated', async () => {
    const r = await receiver();
    const { merchant } = await merchantWithEndpoint(r.url);
    // As after a change of SAFEHOLD_SECRET: sealed under a key the service no longer has.
    await h.ctx.db.query(
      "UPDATE webhook_secrets SET sealed_secret = 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA' WHERE merchant_id = $1",
      [merchant.merchant_id],
    );
    await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, 0, 'nothing unsigned leaves the service');
    const list = json<{ data: { id: string }[] }>(
      await h.request({ method: 'GET', url: '/v1/events', key: merchant.test_key }),
    );
    const event = json<{ deliveries: { status: string; attempts: { error: string }[] }[] }>(
      await h.request({ method: 'GET', url: `/v1/events/${list.data[0]?.id}`, key: merchant.test_key }),
    );
    assert.equal(event.deliveries[0]?.status, 'pending');
    assert.match(String(event.deliveries[0]?.attempts[0]?.error), /signing secret cannot be read/);
    const rotated = json<{ secret: string }>(
      await h.request({ method: 'POST', url: '/v1/webhook_secret/rotate', key: merchant.test_key }),
    );
    await advance(merchant, 60);
    assert.equal(r.received.length, 1);
    const sent = r.received[0];
    const timestamp = String(sent?.headers['x-service-timestamp']);
    assert.equal(
      sent?.headers['x-service-signature'],
      expectedSignature(rotated.secret, timestamp, sent?.body ?? ''),
    );
  });
});
