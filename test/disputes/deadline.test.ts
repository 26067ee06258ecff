import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound, statusChanges } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { advance, disputeOn, eventsOf, type Json, paidTransaction, transaction } from './helpers.ts';

const DAY = 24 * 3600;

describe('dispute deadlines and the frozen auto-release', () => {
  const h = suiteHarness({ operatorKey: true });

  const dispute = async (id: unknown, key: string) =>
    json(await h.request({ method: 'GET', url: `/v1/disputes/${String(id)}`, key }));

  it('puts the case under review when evidence_due_by passes (clock/advance), with dispute.updated', async () => {
    const m = await h.newMerchant();
    const { id } = await paidTransaction(h, { key: m.test_key, deliver: true });
    const d = await disputeOn(h, id, {}, m.test_key);
    await advance(h, 7 * DAY - 1, m.test_key);
    const get = async () =>
      json(await h.request({ method: 'GET', url: `/v1/disputes/${String(d.id)}`, key: m.test_key }));
    assert.equal((await get()).status, 'open');
    assert.equal((await transaction(h, id, m.test_key)).status, 'disputed');
    assert.equal((await eventsOf(h, id, 'dispute.updated')).length, 0);

    const clock = await advance(h, 1, m.test_key);
    assert.ok(Number(clock.jobs_run) >= 1);
    const after = await get();
    assert.equal(after.status, 'under_review');
    assert.equal(after.updated_at, d.evidence_due_by);
    const t = await transaction(h, id, m.test_key);
    assert.equal(t.status, 'under_review');
    assert.equal(t.settlement_status, 'under_review');
    const last = (await statusChanges(h.ctx.db, id)).at(-1);
    assert.deepEqual(last, {
      previous_status: 'disputed',
      status: 'under_review',
      settlement_status: 'under_review',
    });
    const updated = await eventsOf(h, id, 'dispute.updated');
    assert.equal(updated.length, 1);
    assert.equal((updated[0]?.data as Json | undefined)?.status, 'under_review');
    assert.equal(updated[0]?.occurred_at, d.evidence_due_by);
    // Nothing more happens on its own: the decision is the operator's.
    // (Not past 30 days: events older than that are purged.)
    await advance(h, 10 * DAY, m.test_key);
    assert.equal((await get()).status, 'under_review');
    assert.equal((await transaction(h, id, m.test_key)).status, 'under_review');

    const resolved = await h.request({
      method: 'POST',
      url: `/v1/disputes/${String(d.id)}/resolve`,
      key: h.operatorKey,
      payload: { decision: 'seller' },
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    // From under_review there is no second review move.
    const changes = (await statusChanges(h.ctx.db, id)).map((c) => c.status);
    assert.deepEqual(changes.slice(-3), ['disputed', 'under_review', 'confirmed']);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'deadline then seller');
  });

  it('freezes the auto-release of a delivered transaction while the dispute is open', async () => {
    const m = await h.newMerchant();
    const { id } = await paidTransaction(h, {
      key: m.test_key,
      deliver: true,
      body: { satisfaction_days: 2 },
    });
    const before = await transaction(h, id, m.test_key);
    assert.ok(before.review_deadline);
    await disputeOn(h, id, {}, m.test_key);
    const { rows } = await h.ctx.db.query(
      `SELECT kind FROM scheduled_jobs WHERE subject_id = $1 AND kind IN ('auto_release', 'time_release')`,
      [id],
    );
    assert.equal(rows.length, 0);
    await advance(h, 3 * DAY, m.test_key);
    const t = await transaction(h, id, m.test_key);
    assert.equal(t.status, 'disputed');
    assert.equal(t.amount_released, 0);
    // The table refuses a release while disputed.
    const release = await h.request({
      method: 'POST',
      url: `/v1/transactions/${id}/release`,
      key: m.test_key,
    });
    assert.equal(release.statusCode, 409);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'frozen auto-release');
  });

  it('freezes a time-based release too', async () => {
    const m = await h.newMerchant();
    const releaseAt = new Date(h.clock.now().getTime() + DAY * 1000).toISOString();
    const { id } = await paidTransaction(h, {
      key: m.test_key,
      body: { release_condition: { type: 'time_based', release_at: releaseAt } },
    });
    await disputeOn(h, id, {}, m.test_key);
    await advance(h, 2 * DAY, m.test_key);
    assert.equal((await transaction(h, id, m.test_key)).status, 'disputed');
  });

  it('a dispute decided before its deadline keeps its outcome when the deadline passes', async () => {
    const m = await h.newMerchant();
    const { id } = await paidTransaction(h, { key: m.test_key });
    const d = await disputeOn(h, id, {}, m.test_key);
    const res = await h.request({
      method: 'POST',
      url: `/v1/disputes/${String(d.id)}/resolve`,
      key: h.operatorKey,
      payload: { decision: 'buyer' },
    });
    assert.equal(res.statusCode, 200, res.body);
    await advance(h, 8 * DAY, m.test_key);
    const view = await dispute(d.id, m.test_key);
    assert.equal(view.status, 'resolved');
    const t = await transaction(h, id, m.test_key);
    assert.equal(t.status, 'refunded');
    assert.equal(t.settlement_status, 'refunded');
    assert.equal((await eventsOf(h, id, 'dispute.updated')).length, 0);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'decided before the deadline');
  });
});
