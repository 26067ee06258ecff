import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settleRefundJob } from '../../src/operations/refund-moves.ts';
import type { ClaimedJob } from '../../src/store/jobs.ts';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound, journalKinds, statusChanges } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { client, REFUND_FAILS_CARD } from './support.ts';

/** Refunds of held funds (reserved, delivered): from escrow, settled by the simulated rail. */
describe('POST /v1/refunds of held funds', () => {
  const h = suiteHarness();
  const c = client(() => h);

  it('refunds a reserved transaction in full: 201 pending, then the rail makes it succeeded', async () => {
    const id = await c.paid({ body: { merchant_reference: 'order-r1', merchant_order_id: 'SO-1' } });
    const res = await c.refund({ service_transaction_id: id, reason: 'requested_by_customer' });
    assert.equal(res.statusCode, 201, res.body);
    const refund = json(res);
    assert.match(String(refund.id), /^rfd_[0-9A-Z]{26}$/);
    assert.deepEqual(
      { ...refund, id: 'x', created_at: 'x', updated_at: 'x' },
      {
        object: 'refund',
        id: 'x',
        status: 'pending',
        amount: 1000,
        amount_minor: 100000,
        currency: 'KES',
        service_transaction_id: id,
        merchant_reference: 'order-r1',
        merchant_order_id: 'SO-1',
        reason: 'requested_by_customer',
        origin: 'api',
        dispute_id: null,
        failure_reason: null,
        livemode: false,
        created_at: 'x',
        updated_at: 'x',
      },
    );
    assert.match(String(refund.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const moved = await c.transaction(id);
    assert.equal(moved.status, 'refunded');
    assert.equal(moved.settlement_status, 'refund_pending');
    assert.equal(moved.amount_refunded, 1000);
    assert.equal((await c.events('refund.succeeded', id)).length, 0, 'not before the rail answers');

    const advanced = await c.advance(1);
    assert.ok(Number(advanced.jobs_run) >= 1);
    const settled = json(await c.get(`/v1/refunds/${refund.id}`));
    assert.equal(settled.status, 'succeeded');
    assert.equal(settled.failure_reason, null);
    const done = await c.transaction(id);
    assert.equal(done.status, 'refunded');
    assert.equal(done.settlement_status, 'refunded');

    const [event] = await c.events('refund.succeeded', id);
    assert.ok(event, 'a refund.succeeded event');
    assert.equal(event.service_transaction_id, id);
    assert.equal(event.merchant_reference, 'order-r1');
    assert.deepEqual((event.data as Record<string, unknown>).id, refund.id);
    assert.equal((event.data as Record<string, unknown>).status, 'succeeded');
    assert.deepEqual(
      (await statusChanges(h.ctx.db, id)).map((s) => `${s.status}/${s.settlement_status}`),
      ['reserved/pending_confirmation', 'refunded/refund_pending'],
      'status_changed fires on a change of status; the settlement is told by refund.succeeded',
    );
    assert.deepEqual(await journalKinds(h.ctx.db, id), { capture: 1, refund: 1, refund_paid: 1 });
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a full refund');
  });

  it('refunds part of a delivered transaction: the state and its review deadline stay', async () => {
    const id = await c.paid({ deliver: true });
    const res = await c.refund({ service_transaction_id: id, amount: 250.5 });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).amount, 250.5);
    assert.equal(json(res).amount_minor, 25050);
    assert.equal(json(res).reason, null);
    const after = await c.transaction(id);
    assert.equal(after.status, 'delivered');
    assert.equal(after.settlement_status, 'pending_confirmation');
    assert.equal(after.amount_refunded, 250.5);
    await c.advance(1);
    assert.equal(json(await c.get(`/v1/refunds/${json(res).id}`)).status, 'succeeded');
    assert.equal((await c.transaction(id)).status, 'delivered', 'a partial refund settles without a move');

    // The review window (3 days) still ends with the rest released to the seller.
    await c.advance(3 * 86400);
    const released = await c.transaction(id);
    // Released to the seller: confirmed, or released if the daily payout (midnight UTC) ran meanwhile.
    assert.ok(['confirmed', 'released'].includes(String(released.status)), String(released.status));
    assert.equal(released.amount_released, 749.5);
    assert.equal(released.amount_refunded, 250.5);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a partial refund then release');
  });

  it('a second refund without amount takes the rest and moves the transaction to refunded', async () => {
    const id = await c.paid({ deliver: true });
    const first = json(await c.refund({ service_transaction_id: id, amount: 100 }));
    const rest = await c.refund({ service_transaction_id: id, reason: 'other' });
    assert.equal(rest.statusCode, 201, rest.body);
    assert.equal(json(rest).amount, 900);
    const moved = await c.transaction(id);
    assert.equal(moved.status, 'refunded');
    assert.equal(moved.amount_refunded, 1000);
    await c.advance(1);
    for (const r of [first, json(rest)]) {
      assert.equal(json(await c.get(`/v1/refunds/${r.id}`)).status, 'succeeded');
    }
    assert.equal((await c.transaction(id)).settlement_status, 'refunded');
    assert.equal((await c.events('refund.succeeded', id)).length, 2);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'two refunds');
  });

  it('refunds what is still held of a partly released transaction, from escrow only', async () => {
    const id = await c.paid({ deliver: true });
    const release = await c.post(`/v1/transactions/${id}/release`, { amount: 400 });
    assert.equal(release.statusCode, 200, release.body);
    const over = await c.refund({ service_transaction_id: id, amount: 600.01 });
    assert.equal(over.statusCode, 400, over.body);
    assert.equal(json<{ error: { param: string } }>(over).error.param, 'amount');
    const res = await c.refund({ service_transaction_id: id });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).amount, 600);
    const after = await c.transaction(id);
    assert.equal(after.amount_released, 400);
    assert.equal(after.amount_refunded, 600);
    assert.equal(after.status, 'delivered', 'until the refund is paid');
    await c.advance(1);
    assert.equal(json(await c.get(`/v1/refunds/${json(res).id}`)).status, 'succeeded');
    // Nothing is held any more: the released part is the seller's, on its way to the payout.
    const closed = await c.transaction(id);
    assert.ok(['confirmed', 'released'].includes(String(closed.status)), String(closed.status));
    assert.equal(closed.amount_released, 400);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a refund of the held part');
  });

  it('a refund the rail cannot pay (card …5126) fails: the money goes back and the state is restored', async () => {
    const id = await c.paid({ card: REFUND_FAILS_CARD });
    const res = await c.refund({ service_transaction_id: id, reason: 'duplicate' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await c.transaction(id)).status, 'refunded');
    await c.advance(1);
    const failed = json(await c.get(`/v1/refunds/${json(res).id}`));
    assert.equal(failed.status, 'failed');
    assert.match(String(failed.failure_reason), /5126/);
    const back = await c.transaction(id);
    assert.equal(back.status, 'reserved');
    assert.equal(back.settlement_status, 'pending_confirmation');
    assert.equal(back.amount_refunded, 0);
    const [event] = await c.events('refund.failed', id);
    assert.ok(event, 'a refund.failed event');
    assert.equal((event.data as Record<string, unknown>).status, 'failed');
    assert.equal((await c.events('refund.succeeded', id)).length, 0);
    assert.deepEqual(await journalKinds(h.ctx.db, id), { capture: 1, refund: 1, refund_returned: 1 });
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a failed refund');

    // The money is held again: it can be refunded again (and fails again on this card).
    const again = await c.refund({ service_transaction_id: id, amount: 10 });
    assert.equal(again.statusCode, 201, again.body);
  });

  it('a failed full refund of a delivered transaction gives back its review deadline', async () => {
    const id = await c.paid({ card: REFUND_FAILS_CARD, deliver: true });
    assert.equal(json(await c.refund({ service_transaction_id: id })).status, 'pending');
    await c.advance(1);
    const back = await c.transaction(id);
    assert.equal(back.status, 'delivered');
    assert.equal(back.amount_refunded, 0);
    await c.advance(3 * 86400);
    const released = await c.transaction(id);
    // Released to the seller: confirmed, or released if the daily payout (midnight UTC) ran meanwhile.
    assert.ok(
      ['confirmed', 'released'].includes(String(released.status)),
      'the auto-release cancelled by the refund runs again',
    );
    assert.equal(released.amount_released, 1000);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a failed refund then auto-release');
  });

  it('two failed refunds (a part, then the rest) put the transaction back with everything held', async () => {
    const id = await c.paid({ card: REFUND_FAILS_CARD, deliver: true });
    const partial = json(await c.refund({ service_transaction_id: id, amount: 300 }));
    const rest = json(await c.refund({ service_transaction_id: id }));
    assert.equal((await c.transaction(id)).status, 'refunded');
    await c.advance(1);
    for (const r of [partial, rest]) assert.equal(json(await c.get(`/v1/refunds/${r.id}`)).status, 'failed');
    const back = await c.transaction(id);
    assert.equal(back.status, 'delivered');
    assert.equal(back.settlement_status, 'pending_confirmation');
    assert.equal(back.amount_refunded, 0);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'two failed refunds');
  });

  it('a failed partial refund, when a later refund took the rest and succeeds, restores the state that refund found', async () => {
    const id = await c.paid({ card: REFUND_FAILS_CARD, deliver: true });
    const partial = json(await c.refund({ service_transaction_id: id, amount: 300 }));
    const rest = json(await c.refund({ service_transaction_id: id }));
    // The rail answers the partial refund first (it fails), then the rest: by then the buyer's card
    // takes refunds again, so that one succeeds.
    await h.ctx.db.transaction(async (tx) => {
      const job = await tx.query<ClaimedJob>(
        `SELECT *, 0::bigint AS clock_offset_ms FROM scheduled_jobs WHERE kind = 'settle_refund' AND subject_id = $1`,
        [partial.id],
      );
      const claimed = job.rows[0];
      assert.ok(claimed);
      await settleRefundJob(h.ctx, tx, claimed, new Date(String(rest.created_at)));
      await tx.query('DELETE FROM scheduled_jobs WHERE id = $1', [claimed.id]);
    });
    assert.equal(json(await c.get(`/v1/refunds/${partial.id}`)).status, 'failed');
    const between = await c.transaction(id);
    assert.equal(between.status, 'delivered', 'back to where the refund of the rest found it');
    assert.equal(between.amount_refunded, 700);
    await h.ctx.db.query(
      `UPDATE transactions SET payment_method = '{"type":"card","last4":"4242"}' WHERE id = $1`,
      [id],
    );
    await c.advance(1);
    assert.equal(json(await c.get(`/v1/refunds/${rest.id}`)).status, 'succeeded');
    const after = await c.transaction(id);
    assert.equal(after.status, 'delivered', 'not refunded while 300 is held');
    assert.equal(after.amount_refunded, 700);
    await c.advance(3 * 86400);
    const released = await c.transaction(id);
    // Released to the seller: confirmed, or released if the daily payout (midnight UTC) ran meanwhile.
    assert.ok(['confirmed', 'released'].includes(String(released.status)), String(released.status));
    assert.equal(released.amount_released, 300);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a failed part and a paid rest');
  });

  it('refunds of a phone ending 5126 fail too; a cancel after payment is a refund with origin cancel', async () => {
    const created = json(await c.post('/v1/transactions', { amount: 500, title: 'Chair' }));
    const id = String(created.service_transaction_id);
    const pay = await c.post(`/v1/test_helpers/transactions/${id}/pay`, {
      method: 'mobile_money',
      phone: '+254700005126',
    });
    assert.equal(json(pay).status, 'reserved', pay.body);
    const cancel = await c.post(`/v1/transactions/${id}/cancel`);
    assert.equal(json(cancel).status, 'refunded', cancel.body);
    const list = json<{ data: Record<string, unknown>[] }>(
      await c.get(`/v1/refunds?service_transaction_id=${id}`),
    );
    assert.equal(list.data.length, 1);
    assert.equal(list.data[0]?.origin, 'cancel');
    assert.equal(list.data[0]?.reason, 'cancelled');
    await c.advance(1);
    assert.equal(json(await c.get(`/v1/refunds/${list.data[0]?.id}`)).status, 'failed');
    assert.equal((await c.transaction(id)).status, 'reserved');
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'a failed cancel refund');
  });
  it('a partial refund the rail refuses after the transaction was confirmed: its money is approved for the seller', async () => {
    const id = await c.paid({ amount: 100, card: REFUND_FAILS_CARD, deliver: true });
    assert.equal((await c.refund({ service_transaction_id: id, amount: 40 })).statusCode, 201);
    // Confirmed before the rail answers: the 60 still held are approved, the 40 are on their way.
    const confirmed = json(await c.post(`/v1/transactions/${id}/confirm`));
    assert.deepEqual(
      [confirmed.status, confirmed.amount_released, confirmed.amount_refunded],
      ['confirmed', 60, 40],
    );
    await c.advance(1);
    // No deadline is left to release the returned 40: they go to the seller with the rest.
    const t = await c.transaction(id);
    assert.deepEqual(
      [t.status, t.settlement_status, t.amount_released, t.amount_refunded],
      ['confirmed', 'approved_for_release', 100, 0],
    );
    assert.equal((await c.events('refund.failed', id)).length, 1);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'returned refund approved');
  });
});
