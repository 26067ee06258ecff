import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/operations/webhook-settings.ts';
import { startWebhookDispatcher } from '../../src/worker/webhook-dispatcher.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { type Receiver, startReceiver, waitFor } from './receiver.ts';

const quiet = { error: () => {}, debug: () => {} };

describe('the worker’s webhook dispatcher', () => {
  let h: Harness;
  let slow: Receiver;
  let fast: Receiver;
  before(async () => {
    h = await startHarness();
    h.ctx.webhooks = { ...DEFAULT_WEBHOOK_SETTINGS, perEndpoint: 2, pollMs: 20, timeoutMs: 60_000 };
    slow = await startReceiver(() => ({ status: 200, hang: true }));
    fast = await startReceiver();
  });
  after(async () => {
    await slow.close();
    await fast.close();
    await h.close();
  });

  it('bounds requests per endpoint, so a receiver that hangs does not hold up another', async () => {
    const merchant = await h.newMerchant();
    for (const r of [slow, fast]) {
      const res = await h.request({
        method: 'POST',
        url: '/v1/webhook_endpoints',
        key: merchant.test_key,
        payload: { url: r.url },
      });
      assert.equal(res.statusCode, 201);
    }
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await h.request({
        method: 'POST',
        url: '/v1/transactions',
        key: merchant.test_key,
        payload: { amount: 10, title: `Item ${i}` },
      });
      ids.push(String(json(res).service_transaction_id));
    }
    const dispatcher = startWebhookDispatcher(h.ctx, { logger: quiet });
    try {
      await waitFor(() => fast.received.length === 8, 'the fast receiver to get all eight events');
      assert.equal(slow.received.length, 2, 'two requests in flight to the hanging receiver, no more');
      slow.release();
      slow.answer = () => ({ status: 200 });
      await waitFor(() => slow.received.length === 8, 'the slow receiver to get the rest');
    } finally {
      await dispatcher.stop();
    }
    const { rows } = await h.ctx.db.query<{ status: string; n: bigint }>(
      `SELECT status, count(*) AS n FROM webhook_deliveries WHERE merchant_id = $1 GROUP BY status`,
      [merchant.merchant_id],
    );
    assert.deepEqual(
      rows.map((r) => [r.status, Number(r.n)]),
      [['succeeded', 16]],
    );
    const received = fast.received.map((q) => JSON.parse(q.body).service_transaction_id).sort();
    assert.deepEqual(received, [...ids].sort());
  });
});
