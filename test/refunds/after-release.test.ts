import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound, journalKinds } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { type Body, client, REFUND_FAILS_CARD } from './support.ts';

const DAY = 86_400;

/**
 * Refunds of paid-out funds: taken from the merchant's balance, only within the agreement window
 * (refunds_after_release_days after released_at). Each test has its own merchant, paid out at
 * once (payout schedule instant), so clock moves of one test do not touch another's window.
 */
describe('POST /v1/refunds after release', () => {
  const h = suiteHarness();
  const c = client(() => h);

  /** A merchant whose approved funds are paid out at once (on the next clock advance). */
  async function instantMerchant(): Promise<CreatedMerchant> {
    const m = await h.newMerchant();
    const res = await c.post(
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254711000000', schedule: 'instant' },
      m.test_key,
    );
    assert.equal(res.statusCode, 200, res.body);
    return m;
  }

  /** Paid, confirmed, and its payout paid: released / released. */
  async function released(m: CreatedMerchant, options: { card?: string; amount?: number } = {}) {
    const id = await c.paid({ key: m.test_key, ...options });
    assert.equal(json(await c.post(`/v1/transactions/${id}/confirm`, {}, m.test_key)).status, 'confirmed');
    await c.advance(1, m.test_key);
    const t = await c.transaction(id, m.test_key);
    assert.equal(`${t.status}/${t.settlement_status}`, 'released/released');
    return id;
  }

  const balance = async (m: CreatedMerchant) => {
    const res = await c.get('/v1/balance', m.test_key);
    assert.equal(res.statusCode, 200, res.body);
    const [kes] = json<{ currencies: Body[] }>(res).currencies;
    assert.ok(kes);
    return kes;
  };

  it('refunds a released transaction in full from the merchant’s balance', async () => {
    const m = await instantMerchant();
    const id = await released(m);
    const res = await c.refund({ service_transaction_id: id, reason: 'requested_by_customer' }, m.test_key);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).amount, 1000);
    const moved = await c.transaction(id, m.test_key);
    assert.equal(`${moved.status}/${moved.settlement_status}`, 'refunded/refund_pending');
    assert.equal((await balance(m)).merchant_balance, -1000);
    assert.equal((await balance(m)).refund_pending, 1000);

    await c.advance(1, m.test_key);
    assert.equal(json(await c.get(`/v1/refunds/${json(res).id}`, m.test_key)).status, 'succeeded');
    const done = await c.transaction(id, m.test_key);
    assert.equal(`${done.status}/${done.settlement_status}`, 'refunded/refunded');
    assert.equal(done.amount_refunded, 1000);
    assert.equal(done.amount_released, 1000, 'the seller was paid; the merchant’s balance paid the buyer');
    const b = await balance(m);
    assert.equal(b.paid_out, 1000);
    assert.equal(b.refunded, 1000);
    assert.equal(b.refund_pending, 0);
    assert.equal(b.merchant_balance, -1000);
    assert.equal(b.merchant_balance_minor, -100000);
    const kinds = await journalKinds(h.ctx.db, id);
    assert.equal(kinds.refund_from_balance, 1);
    assert.equal(kinds.refund, undefined, 'nothing came from escrow');
    assert.equal((await c.events('refund.succeeded', id, m.test_key)).length, 1);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'a refund from the balance');
  });

  it('a partial refund keeps the transaction released; the rest then refunds it', async () => {
    const m = await instantMerchant();
    const id = await released(m);
    const part = await c.refund({ service_transaction_id: id, amount: 300 }, m.test_key);
    assert.equal(part.statusCode, 201, part.body);
    const kept = await c.transaction(id, m.test_key);
    assert.equal(`${kept.status}/${kept.settlement_status}`, 'released/released');
    assert.equal(kept.amount_refunded, 300);
    await c.advance(1, m.test_key);
    assert.equal(`${(await c.transaction(id, m.test_key)).status}`, 'released');
    const over = await c.refund({ service_transaction_id: id, amount: 700.01 }, m.test_key);
    assert.equal(assertErrorEnvelope(over, 400, 'invalid_request', 'invalid_request').param, 'amount');
    const rest = await c.refund({ service_transaction_id: id }, m.test_key);
    assert.equal(json(rest).amount, 700);
    await c.advance(1, m.test_key);
    const done = await c.transaction(id, m.test_key);
    assert.equal(`${done.status}/${done.settlement_status}`, 'refunded/refunded');
    assert.equal((await balance(m)).merchant_balance, -1000);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'two refunds from the balance');
  });

  it('the agreement window: allowed until refunds_after_release_days have passed, then 409', async () => {
    const m = await instantMerchant();
    const id = await released(m);
    await c.advance(30 * DAY - 5, m.test_key);
    const inside = await c.refund({ service_transaction_id: id, amount: 1 }, m.test_key);
    assert.equal(inside.statusCode, 201, inside.body);
    await c.advance(10, m.test_key);
    const error = assertErrorEnvelope(
      await c.refund({ service_transaction_id: id, amount: 1 }, m.test_key),
      409,
      'conflict',
      'conflict',
    );
    assert.match(error.message, /merchant agreement no longer allows refunds of paid-out funds/);
    assert.equal((await c.transaction(id, m.test_key)).amount_refunded, 1);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the window');
  });

  it('a merchant agreement of 0 days allows no refund after release', async () => {
    const m = await instantMerchant();
    await h.ctx.db.query('UPDATE merchants SET refunds_after_release_days = 0 WHERE id = $1', [
      m.merchant_id,
    ]);
    const id = await released(m);
    const error = assertErrorEnvelope(
      await c.refund({ service_transaction_id: id }, m.test_key),
      409,
      'conflict',
      'conflict',
    );
    assert.match(error.message, /status is released: the merchant agreement no longer allows/);
  });

  it('a partly released, partly paid-out transaction refunds escrow first, then the balance', async () => {
    const m = await instantMerchant();
    const id = await c.paid({ key: m.test_key, deliver: true });
    await c.post(`/v1/transactions/${id}/release`, { amount: 400 }, m.test_key);
    await c.advance(1, m.test_key);
    const paidOut = await c.transaction(id, m.test_key);
    assert.equal(paidOut.status, 'delivered', 'the paid-out part does not release the transaction');
    const payouts = json<{ data: Body[] }>(await c.get('/v1/payouts?status=paid', m.test_key));
    assert.equal(payouts.data[0]?.amount, 400);

    const res = await c.refund({ service_transaction_id: id }, m.test_key);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).amount, 1000);
    assert.equal((await c.transaction(id, m.test_key)).status, 'refunded');
    await c.advance(1, m.test_key);
    assert.equal((await c.transaction(id, m.test_key)).settlement_status, 'refunded');
    const kinds = await journalKinds(h.ctx.db, id);
    assert.equal(kinds.refund, 1);
    assert.equal(kinds.refund_from_balance, 1);
    const b = await balance(m);
    assert.equal(b.merchant_balance, -400);
    assert.equal(b.refunded, 1000);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'a refund from escrow and balance');
  });

  it('refunding only the held rest of a paid-out partial release completes the transaction', async () => {
    const m = await instantMerchant();
    const id = await c.paid({ key: m.test_key, deliver: true });
    await c.post(`/v1/transactions/${id}/release`, { amount: 400 }, m.test_key);
    await c.advance(1, m.test_key);
    const res = await c.refund({ service_transaction_id: id, amount: 600 }, m.test_key);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await c.transaction(id, m.test_key)).status, 'delivered');
    await c.advance(1, m.test_key);
    const done = await c.transaction(id, m.test_key);
    assert.equal(`${done.status}/${done.settlement_status}`, 'released/released');
    assert.equal(done.amount_released, 400);
    assert.equal(done.amount_refunded, 600);
    assert.equal((await c.events('transaction.completed', id, m.test_key)).length, 1);
    assert.equal((await balance(m)).merchant_balance, 0, 'nothing came from the balance');
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the held rest refunded');
  });

  it('a refund from the balance the rail cannot pay fails: the balance is restored, and released again', async () => {
    const m = await instantMerchant();
    const id = await released(m, { card: REFUND_FAILS_CARD });
    const res = await c.refund({ service_transaction_id: id }, m.test_key);
    assert.equal((await c.transaction(id, m.test_key)).status, 'refunded');
    await c.advance(1, m.test_key);
    const failed = json(await c.get(`/v1/refunds/${json(res).id}`, m.test_key));
    assert.equal(failed.status, 'failed');
    const back = await c.transaction(id, m.test_key);
    assert.equal(`${back.status}/${back.settlement_status}`, 'released/released');
    assert.equal(back.amount_refunded, 0);
    assert.equal((await balance(m)).merchant_balance, 0);
    assert.equal((await journalKinds(h.ctx.db, id)).refund_returned_to_balance, 1);
    assert.equal((await c.events('refund.failed', id, m.test_key)).length, 1);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'a failed refund from the balance');
  });

  it('a transaction whose payout was reversed cannot be refunded (409); its money is owed to the merchant', async () => {
    const m = await instantMerchant();
    const id = await released(m);
    const [payout] = json<{ data: Body[] }>(await c.get('/v1/payouts?status=paid', m.test_key)).data;
    assert.ok(payout);
    const reversed = await c.post(`/v1/test_helpers/payouts/${payout.id}/reverse`, {}, m.test_key);
    assert.equal(reversed.statusCode, 200, reversed.body);
    assert.equal((await c.transaction(id, m.test_key)).settlement_status, 'reversed');
    const error = assertErrorEnvelope(
      await c.refund({ service_transaction_id: id }, m.test_key),
      409,
      'conflict',
      'conflict',
    );
    assert.match(error.message, /its payout was reversed/);
    const b = await balance(m);
    assert.equal(b.merchant_balance, 1000);
    assert.equal(b.paid_out, 0);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'a reversed payout');
  });
});
