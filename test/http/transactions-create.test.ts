import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

describe('POST /v1/transactions', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('creates a pending_payment transaction in the flat shape and answers 201', async () => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 1500.5, title: 'Used phone', vertical: 'electronics', satisfaction_days: 5, seller_email: 's@example.com' },
    });
    assert.equal(res.statusCode, 201);
    const t = json(res);
    assert.equal(t.status, 'pending_payment');
    assert.equal(t.settlement_status, 'awaiting_payment');
    assert.equal(t.amount, 1500.5);
    assert.equal(t.amount_minor, 150050);
    assert.equal(t.currency, 'KES');
    assert.deepEqual(t.release_condition, { type: 'buyer_confirmation', review_window_days: 5, release_at: null });
    assert.deepEqual(t.seller, { merchant_id: null, email: 's@example.com', name: null });
    assert.match(String(t.service_transaction_id), /^txn_[0-9A-Z]{26}$/);
    assert.match(String(t.payment_link), /^http:\/\/localhost:3000\/pay\/[A-Za-z0-9_-]{43}$/);
    assert.match(String(res.headers['x-request-id']), /^req_/);
  });

  it('replays the same merchant_reference and body with 200 and Idempotent-Replayed', async () => {
    const body = { amount: 10, title: 'Book', merchant_reference: 'ref-replay' };
    const first = await h.request({ method: 'POST', url: '/v1/transactions', payload: body });
    const second = await h.request({ method: 'POST', url: '/v1/transactions', payload: body });
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(json(second).service_transaction_id, json(first).service_transaction_id);
  });
});
