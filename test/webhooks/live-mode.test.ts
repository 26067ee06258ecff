import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { insertEndpoint } from '../../src/store/webhook-endpoints.ts';
import { runDueWebhooks } from '../../src/worker/run-due-webhooks.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from './receiver.ts';

interface Attempt {
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
}

describe('live mode: webhooks never reach loopback, private or link-local addresses', () => {
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

  it('refuses at delivery an endpoint or callback_url that resolves to a private address (DNS changed since registration)', async () => {
    const merchant = await h.newMerchant({ verified: true });
    const port = new URL(r.url).port;
    // As if these had resolved to public addresses when registered: written straight to the table.
    for (const url of [`https://localhost:${port}/hooks`, `https://127.0.0.1:${port}/hooks`]) {
      await insertEndpoint(h.ctx.db, {
        id: newId('webhookEndpoint'),
        merchant_id: merchant.merchant_id,
        livemode: true,
        url,
        description: null,
        enabled_events: ['*'],
        status: 'enabled',
        created_at: h.clock.now(),
        updated_at: h.clock.now(),
      });
    }
    const created = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.live_key,
      payload: { amount: 10, title: 'Pen', callback_url: 'https://93.184.216.34/cb' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = String(json(created).service_transaction_id);
    await h.ctx.db.query('UPDATE transactions SET callback_url = $2 WHERE id = $1', [
      id,
      `https://localhost:${port}/cb`,
    ]);

    assert.equal(await runDueWebhooks(h.ctx), 3);
    assert.equal(r.received.length, 0, 'nothing reached the receiver');
    const events = json<{ data: { id: string }[] }>(
      await h.request({ method: 'GET', url: '/v1/events', key: merchant.live_key }),
    );
    const event = json<{ deliveries: { url: string; attempts: Attempt[] }[] }>(
      await h.request({ method: 'GET', url: `/v1/events/${events.data[0]?.id}`, key: merchant.live_key }),
    );
    assert.equal(event.deliveries.length, 3);
    for (const delivery of event.deliveries) {
      const attempt = delivery.attempts[0];
      assert.equal(attempt?.succeeded, false, delivery.url);
      assert.equal(attempt?.status_code, null);
      assert.match(String(attempt?.error), /refused: .*not a public address/);
    }
  });

  it('still delivers to loopback in test mode', async () => {
    const merchant = await h.newMerchant();
    await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: { amount: 10, title: 'Pen', callback_url: `${r.url}/cb` },
    });
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, 1);
  });
});
