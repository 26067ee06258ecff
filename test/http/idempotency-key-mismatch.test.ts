import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json } from '../helpers/harness.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';

/** Every mutation takes its key from the header or the body; both given and different is a 400. */
describe('Idempotency-Key header and idempotency_key field that differ', () => {
  const h = suiteHarness();

  it('are refused with 400 param idempotency_key on every keyed POST, and nothing changes', async () => {
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 10, title: 'Pen' } }),
    );
    const id = String(created.service_transaction_id);
    const routes: [string, Record<string, unknown>][] = [
      ['/v1/transactions', { amount: 10, title: 'Pen' }],
      [`/v1/transactions/${id}/cancel`, {}],
      ['/v1/payment_links', { service_transaction_id: id }],
      ['/v1/test_helpers/clock/advance', { seconds: 60 }],
      ['/v1/webhook_secret/rotate', {}],
      ['/v1/refunds', { service_transaction_id: id }],
      ['/v1/payout_settings', { method: 'mobile_money', phone: '+254711223344' }],
    ];
    for (const [url, payload] of routes) {
      const res = await h.request({
        method: 'POST',
        url,
        headers: { 'idempotency-key': 'header-key' },
        payload: { ...payload, idempotency_key: 'body-key' },
      });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(json<{ error: { param: string } }>(res).error.param, 'idempotency_key', url);
    }
    const after = json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));
    assert.equal(after.status, 'pending_payment');
    const clock = json(
      await h.request({ method: 'POST', url: '/v1/test_helpers/clock/advance', payload: { seconds: 1 } }),
    );
    assert.equal(clock.offset_seconds, 1, 'the refused advance did not move the clock');
  });
});
