import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { assertEventTrails, assertLedgerSound, statusChanges } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { advance, disputeOn, eventsOf, type Json, paidTransaction, transaction } from './helpers.ts';

describe('POST /v1/disputes/{id}/resolve: outcomes end to end', () => {
  const h = suiteHarness({ operatorKey: true });

  const resolve = (
    id: unknown,
    payload: Json,
    key: string | null = h.operatorKey,
    headers?: Record<string, string>,
  ) => h.request({ method: 'POST', url: `/v1/disputes/${String(id)}/resolve`, key, payload, headers });
  const refundsOf = async (txn: string) =>
    json(await h.request({ method: 'GET', url: `/v1/refunds?service_transaction_id=${txn}` })).data as Json[];
  const chain = async (txn: string) =>
    (await statusChanges(h.ctx.db, txn)).map((c) => `${c.status}/${c.settlement_status}`);

  it('for the seller: the held funds are approved (confirmed / approved_for_release), then paid out as usual', async () => {
    const { id } = await paidTransaction(h, {
      deliver: true,
      amount: 1000,
      body: { merchant_reference: 'r-seller' },
    });
    const d = await disputeOn(h, id);
    const res = await resolve(d.id, { decision: 'seller', note: 'Courier proof is convincing.' });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.status, 'resolved');
    const outcome = body.outcome as Json;
    assert.equal(outcome.decision, 'seller');
    assert.equal(outcome.amount_to_seller, 1000);
    assert.equal(outcome.amount_to_seller_minor, 100000);
    assert.equal(outcome.amount_to_buyer, 0);
    assert.equal(outcome.note, 'Courier proof is convincing.');
    assert.equal(outcome.decided_at, body.updated_at);

    const t = await transaction(h, id);
    assert.equal(t.status, 'confirmed');
    assert.equal(t.settlement_status, 'approved_for_release');
    assert.equal(t.amount_released, 1000);
    assert.deepEqual((await chain(id)).slice(-3), [
      'disputed/under_review',
      'under_review/under_review',
      'confirmed/approved_for_release',
    ]);
    const resolved = await eventsOf(h, id, 'dispute.resolved');
    assert.equal(resolved.length, 1);
    assert.equal(resolved[0]?.merchant_reference, 'r-seller');
    assert.equal(((resolved[0]?.data as Json | undefined)?.outcome as Json | undefined)?.decision, 'seller');
    assert.deepEqual(await refundsOf(id), []);
    // The deadline job went with the decision.
    const jobs = await h.ctx.db.query('SELECT id FROM scheduled_jobs WHERE subject_id = $1', [d.id]);
    assert.equal(jobs.rowCount, 0);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'resolve seller');

    // The daily payout run pays it to the seller.
    await advance(h, 24 * 3600);
    const paid = await transaction(h, id);
    assert.equal(paid.status, 'released');
    assert.equal(paid.settlement_status, 'released');
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'payout after resolve seller');
  });

  it('for the buyer: everything held is refunded (refunded / refund_pending), settled by the rail a second later', async () => {
    const { id } = await paidTransaction(h, { amount: 750.5 });
    const d = await disputeOn(h, id, { reason: 'not_received' });
    const res = await resolve(d.id, { decision: 'buyer' });
    assert.equal(res.statusCode, 200, res.body);
    const outcome = json(res).outcome as Json;
    assert.deepEqual(
      [outcome.decision, outcome.amount_to_seller, outcome.amount_to_buyer, outcome.note],
      ['buyer', 0, 750.5, null],
    );
    const t = await transaction(h, id);
    assert.equal(t.status, 'refunded');
    assert.equal(t.settlement_status, 'refund_pending');
    assert.equal(t.amount_refunded, 750.5);
    const [refund, ...more] = await refundsOf(id);
    assert.equal(more.length, 0);
    assert.equal(refund?.status, 'pending');
    assert.equal(refund?.amount, 750.5);
    assert.equal(refund?.origin, 'dispute');
    assert.equal(refund?.dispute_id, d.id);
    assert.equal(refund?.reason, 'dispute_lost');
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'resolve buyer');

    await advance(h, 1);
    const settled = await transaction(h, id);
    assert.equal(settled.status, 'refunded');
    assert.equal(settled.settlement_status, 'refunded');
    assert.equal((await refundsOf(id))[0]?.status, 'succeeded');
    const succeeded = await eventsOf(h, id, 'refund.succeeded');
    assert.equal(succeeded.length, 1);
    assert.equal((succeeded[0]?.data as Json | undefined)?.dispute_id, d.id);
    // Settling changes the settlement status only: no status_changed event for it.
    assert.deepEqual((await chain(id)).slice(-3), [
      'disputed/under_review',
      'under_review/under_review',
      'refunded/refund_pending',
    ]);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'buyer refund settled');
  });

  it('split: the seller part is approved, the rest refunded; either amount may be given', async () => {
    const { id } = await paidTransaction(h, { deliver: true, amount: 1000 });
    const d = await disputeOn(h, id);
    const res = await resolve(d.id, {
      decision: 'split',
      amount_to_seller: 300.25,
      note: 'Half-working unit.',
    });
    assert.equal(res.statusCode, 200, res.body);
    const outcome = json(res).outcome as Json;
    assert.deepEqual(
      [outcome.decision, outcome.amount_to_seller, outcome.amount_to_buyer, outcome.amount_to_buyer_minor],
      ['split', 300.25, 699.75, 69975],
    );
    const t = await transaction(h, id);
    assert.equal(t.status, 'confirmed');
    assert.equal(t.settlement_status, 'approved_for_release');
    assert.equal(t.amount_released, 300.25);
    assert.equal(t.amount_refunded, 699.75);
    const [refund] = await refundsOf(id);
    assert.equal(refund?.amount, 699.75);
    assert.equal(refund?.origin, 'dispute');
    assert.equal(refund?.reason, 'dispute_split');
    await advance(h, 1);
    assert.equal((await refundsOf(id))[0]?.status, 'succeeded');
    assert.equal((await transaction(h, id)).status, 'confirmed');
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'split');

    // amount_to_buyer alone: the seller gets the rest.
    const second = await paidTransaction(h, { amount: 80 });
    const d2 = await disputeOn(h, second.id);
    const r2 = await resolve(d2.id, { decision: 'split', amount_to_buyer: 20 });
    assert.equal(r2.statusCode, 200, r2.body);
    assert.deepEqual(
      [(json(r2).outcome as Json).amount_to_seller, (json(r2).outcome as Json).amount_to_buyer],
      [60, 20],
    );
    // Both, adding up.
    const third = await paidTransaction(h, { amount: 50 });
    const d3 = await disputeOn(h, third.id);
    const r3 = await resolve(d3.id, { decision: 'split', amount_to_seller: 10, amount_to_buyer: 40 });
    assert.equal(r3.statusCode, 200, r3.body);
    assert.equal((await transaction(h, third.id)).amount_released, 10);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'splits');
  });

  it('refuses bad outcomes with 400 naming the param, and changes nothing', async () => {
    const { id } = await paidTransaction(h, { amount: 100 });
    const d = await disputeOn(h, id);
    const cases: [Json, string][] = [
      [{ decision: 'split' }, 'amount_to_seller'],
      [{ decision: 'split', amount_to_seller: 100 }, 'amount_to_seller'],
      [{ decision: 'split', amount_to_seller: 150 }, 'amount_to_seller'],
      [{ decision: 'split', amount_to_buyer: 100 }, 'amount_to_buyer'],
      [{ decision: 'split', amount_to_seller: 10.005 }, 'amount_to_seller'],
      [{ decision: 'split', amount_to_seller: 0 }, 'amount_to_seller'],
      [{ decision: 'split', amount_to_seller: 30, amount_to_buyer: 60 }, 'amount_to_buyer'],
      [{ decision: 'seller', amount_to_seller: 100 }, 'amount_to_seller'],
      [{ decision: 'buyer', amount_to_buyer: 100 }, 'amount_to_buyer'],
      [{ decision: 'nobody' }, 'decision'],
      [{}, 'decision'],
      [{ decision: 'seller', note: '' }, 'note'],
      [{ decision: 'seller', note: 'x'.repeat(2001) }, 'note'],
      [{ decision: 'seller', verdict: 'final' }, 'verdict'],
    ];
    for (const [payload, param] of cases) {
      const res = await resolve(d.id, payload);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, `${JSON.stringify(payload)}: ${res.body}`);
    }
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.equal(view.status, 'open');
    assert.equal((await transaction(h, id)).status, 'disputed');
  });

  it("is the operator's alone: a merchant key gets 403 permission_denied, no key 401", async () => {
    const { id } = await paidTransaction(h);
    const d = await disputeOn(h, id);
    for (const key of [h.merchant.test_key, h.merchant.live_key]) {
      const res = await resolve(d.id, { decision: 'seller' }, key);
      assertErrorEnvelope(res, 403, 'permission_denied', 'permission_denied');
    }
    assertErrorEnvelope(
      await resolve(d.id, { decision: 'seller' }, null),
      401,
      'invalid_api_key',
      'authentication_failed',
    );
    assertErrorEnvelope(await resolve('dsp_01NOPE', { decision: 'seller' }), 404, 'not_found', 'not_found');
    assert.equal((await transaction(h, id)).status, 'disputed');
  });

  it('is idempotent with a key (scoped by the dispute) and 409 once decided', async () => {
    const { id } = await paidTransaction(h, { amount: 60 });
    const d = await disputeOn(h, id);
    const headers = { 'idempotency-key': 'decide-1' };
    const first = await resolve(d.id, { decision: 'split', amount_to_seller: 20 }, h.operatorKey, headers);
    assert.equal(first.statusCode, 200, first.body);
    const again = await resolve(d.id, { decision: 'split', amount_to_seller: 20 }, h.operatorKey, headers);
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(again).outcome, json(first).outcome);
    const different = await resolve(d.id, { decision: 'buyer' }, h.operatorKey, headers);
    assertErrorEnvelope(different, 409, 'conflict', 'conflict');
    const decided = await resolve(d.id, { decision: 'buyer' });
    assert.match(assertErrorEnvelope(decided, 409, 'conflict', 'conflict').message, /already resolved/);
    // One refund, one decision.
    const { rows } = await h.ctx.db.query('SELECT id FROM refunds WHERE dispute_id = $1', [d.id]);
    assert.equal(rows.length, 1);
    // The merchant's own key of the same name is another key: the operator's live apart.
    const { id: other } = await paidTransaction(h);
    const mine = await h.request({
      method: 'POST',
      url: '/v1/disputes',
      headers,
      payload: { service_transaction_id: other, reason: 'other', description: 'x' },
    });
    assert.equal(mine.statusCode, 201, mine.body);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'idempotent resolve');
  });

  it('a decision for the buyer whose refund the rail refuses goes back under review, and may be decided again', async () => {
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 45, title: 'Lamp' } }),
    );
    const id = String(created.service_transaction_id);
    // The test card ending 5126 takes payments but refuses refunds.
    const paid = await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${id}/pay`,
      payload: { method: 'card', card_number: '4000000000005126' },
    });
    assert.equal(json(paid).status, 'reserved');
    const d = await disputeOn(h, id);
    assert.equal((await resolve(d.id, { decision: 'buyer' })).statusCode, 200);
    await advance(h, 1);
    const t = await transaction(h, id);
    assert.deepEqual([t.status, t.settlement_status, t.amount_refunded], ['under_review', 'under_review', 0]);
    assert.equal((await refundsOf(id))[0]?.status, 'failed');
    assert.equal((await eventsOf(h, id, 'refund.failed')).length, 1);
    const again = await resolve(d.id, { decision: 'seller', note: 'The refund could not be paid.' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal((json(again).outcome as Json).decision, 'seller');
    const after = await transaction(h, id);
    assert.deepEqual([after.status, after.amount_released], ['confirmed', 45]);
    assert.equal((await eventsOf(h, id, 'dispute.resolved')).length, 2);
    // Now it is final.
    assertErrorEnvelope(await resolve(d.id, { decision: 'buyer' }), 409, 'conflict', 'conflict');
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'decided again after a failed refund');
  });

  it('a split whose buyer part the rail refuses goes back under review with that part held, and may be decided again', async () => {
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 100, title: 'Desk' } }),
    );
    const id = String(created.service_transaction_id);
    await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${id}/pay`,
      payload: { method: 'card', card_number: '4000000000005126' },
    });
    const d = await disputeOn(h, id);
    assert.equal((await resolve(d.id, { decision: 'split', amount_to_seller: 30 })).statusCode, 200);
    assert.equal((await transaction(h, id)).status, 'confirmed');
    await advance(h, 1);
    // The seller's 30 stay approved; the buyer's 70 are held again, for the operator to decide.
    const t = await transaction(h, id);
    assert.deepEqual(
      [t.status, t.settlement_status, t.amount_released, t.amount_refunded],
      ['under_review', 'under_review', 30, 0],
    );
    assert.equal((await refundsOf(id))[0]?.status, 'failed');
    const again = await resolve(d.id, { decision: 'seller', note: 'The buyer cannot be refunded.' });
    assert.equal(again.statusCode, 200, again.body);
    const after = await transaction(h, id);
    assert.deepEqual(
      [after.status, after.settlement_status, after.amount_released],
      ['confirmed', 'approved_for_release', 100],
    );
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'split decided again after a failed refund');
    await assertEventTrails(h.ctx.db, h.merchant.merchant_id, 'split decided again after a failed refund');
  });

  it('two concurrent decisions: one wins, the other is 409, the money moves once', async () => {
    const { id } = await paidTransaction(h, { amount: 90 });
    const d = await disputeOn(h, id);
    const results = await Promise.all([
      resolve(d.id, { decision: 'buyer' }),
      resolve(d.id, { decision: 'split', amount_to_seller: 30 }),
    ]);
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [200, 409]);
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.equal(view.status, 'resolved');
    const { rows } = await h.ctx.db.query('SELECT id FROM refunds WHERE dispute_id = $1', [d.id]);
    assert.equal(rows.length, 1);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'concurrent resolve');
  });
});
