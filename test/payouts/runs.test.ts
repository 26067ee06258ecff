import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountBalances } from '../../src/store/ledger.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound, journalKinds, statusChanges } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  approvedTransaction,
  eventsOf,
  get,
  listPayouts,
  merchantPayingOut,
  type Payout,
  paidTransaction,
  post,
  secondsToMidnight,
  transaction,
} from './helpers.ts';

describe('payout runs', () => {
  const h = suiteHarness();

  it('daily: approved funds wait for midnight UTC, then one payout pays them and releases the transactions', async () => {
    const m = await h.newMerchant();
    const key = m.test_key;
    const a = await approvedTransaction(h, { amount: 1000, merchant_reference: 'order-a' }, key);
    const b = await approvedTransaction(
      h,
      { amount: 250.5, merchant_reference: 'order-b', merchant_order_id: 'SO-2' },
      key,
    );
    assert.equal(a.status, 'confirmed');
    assert.deepEqual((await listPayouts(h, '', key)).data, []);

    const toMidnight = await secondsToMidnight(h, key);
    if (toMidnight > 10) await advance(h, toMidnight - 5, key);
    assert.deepEqual((await listPayouts(h, '', key)).data, [], 'nothing is paid out before midnight');
    assert.equal((await transaction(h, a.service_transaction_id, key)).status, 'confirmed');

    await advance(h, 10, key);
    const { data } = await listPayouts(h, '', key);
    assert.equal(data.length, 1);
    const [payout] = data as [Payout];
    assert.match(payout.id, /^po_/);
    assert.equal(payout.object, 'payout');
    assert.equal(payout.status, 'paid');
    assert.equal(payout.method, 'mobile_money');
    assert.equal(payout.destination, '****0000', 'the simulated default number, masked');
    assert.equal(payout.amount, 1250.5);
    assert.equal(payout.amount_minor, 125050);
    assert.equal(payout.currency, 'KES');
    assert.equal(payout.line_count, 2);
    assert.equal(payout.lines_has_more, false);
    assert.equal(payout.failure_reason, null);
    assert.equal(payout.livemode, false);
    assert.ok(payout.paid_at && payout.paid_at >= payout.created_at);
    assert.match(payout.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Newest transaction first, like every list: by id (within one test-clock millisecond, ids
    // made at the same time sort by their random part).
    const lineA = {
      service_transaction_id: a.service_transaction_id,
      merchant_reference: 'order-a',
      merchant_order_id: null,
      amount: 1000,
      amount_minor: 100000,
    };
    const lineB = {
      service_transaction_id: b.service_transaction_id,
      merchant_reference: 'order-b',
      merchant_order_id: 'SO-2',
      amount: 250.5,
      amount_minor: 25050,
    };
    assert.deepEqual(
      payout.lines,
      b.service_transaction_id > a.service_transaction_id ? [lineB, lineA] : [lineA, lineB],
    );
    assert.deepEqual(await get<Payout>(h, `/v1/payouts/${payout.id}`, key), payout);

    for (const t of [a, b]) {
      const after = await transaction(h, t.service_transaction_id, key);
      assert.equal(after.status, 'released');
      assert.equal(after.settlement_status, 'released');
      assert.deepEqual((await statusChanges(h.ctx.db, t.service_transaction_id)).at(-1), {
        previous_status: 'confirmed',
        status: 'released',
        settlement_status: 'released',
      });
      assert.deepEqual(await journalKinds(h.ctx.db, t.service_transaction_id), {
        approve: 1,
        capture: 1,
        payout: 1,
        payout_paid: 1,
      });
    }
    const completed = await eventsOf(h, m.merchant_id, 'transaction.completed');
    assert.deepEqual(
      completed.map((e) => e.service_transaction_id).sort(),
      [a.service_transaction_id, b.service_transaction_id].sort(),
    );
    const paidEvents = await eventsOf(h, m.merchant_id, 'payout.paid');
    assert.equal(paidEvents.length, 1);
    const [event] = paidEvents as [Record<string, unknown> & { data: Record<string, unknown> }];
    assert.equal(event.service_transaction_id, null);
    assert.equal(event.merchant_reference, null);
    assert.equal(event.data.id, payout.id);
    assert.equal(event.data.status, 'paid');
    assert.equal(event.data.amount_minor, 125050);

    // Everything captured has left through the payout: the rail account and the liabilities are at 0.
    const balances = await accountBalances(h.ctx.db, m.merchant_id);
    assert.ok(balances.length > 0);
    for (const b of balances) assert.equal(b.balance_minor, 0n, `${b.account} balance`);
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('instant: approved funds are paid out as soon as they are approved', async () => {
    const { m, key } = await merchantPayingOut(h);
    const t = await approvedTransaction(h, { amount: 75 }, key);
    const advanced = await advance(h, 1, key);
    assert.ok(advanced.jobs_run >= 2, 'the run and the settlement ran');
    const { data } = await listPayouts(h, '', key);
    assert.equal(data.length, 1);
    assert.equal(data[0]?.status, 'paid');
    assert.equal(data[0]?.destination, '****3344');
    assert.equal(data[0]?.amount, 75);
    assert.equal((await transaction(h, t.service_transaction_id, key)).status, 'released');
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('shows the payout in transit between the rail taking it and its result', async () => {
    const { m, key } = await merchantPayingOut(h);
    const t = await approvedTransaction(h, { amount: 30 }, key);
    const filter = { merchantId: m.merchant_id, livemode: false };
    assert.equal(await runDueJobs(h.ctx, { ...filter, kinds: ['payout_run'] }), 1);
    const [inTransit] = (await listPayouts(h, '', key)).data;
    assert.equal(inTransit?.status, 'in_transit');
    assert.equal(inTransit?.paid_at, null);
    // Batched, not yet paid: the transaction is still approved for release.
    assert.equal((await transaction(h, t.service_transaction_id, key)).status, 'confirmed');
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the run');

    assert.equal(await runDueJobs(h.ctx, { ...filter, kinds: ['payout_settle'] }), 1);
    assert.equal((await get<Payout>(h, `/v1/payouts/${inTransit?.id}`, key)).status, 'paid');
    assert.equal((await transaction(h, t.service_transaction_id, key)).status, 'released');
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the settlement');
  });

  it('pays out a partial release while the rest stays held, and the rest when it is released', async () => {
    const { m, key } = await merchantPayingOut(h);
    const t = await paidTransaction(h, { amount: 1000 }, key);
    const id = t.service_transaction_id;
    assert.equal(json(await post(h, `/v1/transactions/${id}/deliver`, {}, key)).status, 'delivered');
    const part = await post(h, `/v1/transactions/${id}/release`, { amount: 400 }, key);
    assert.equal(part.statusCode, 200, part.body);
    await advance(h, 1, key);

    const [first] = (await listPayouts(h, '', key)).data;
    assert.equal(first?.status, 'paid');
    assert.equal(first?.amount, 400);
    assert.deepEqual(
      first?.lines.map((l) => [l.service_transaction_id, l.amount]),
      [[id, 400]],
    );
    const held = await transaction(h, id, key);
    assert.equal(held.status, 'delivered', 'a partial payout does not release the transaction');
    assert.equal(held.settlement_status, 'pending_confirmation');
    assert.equal(held.amount_released, 400);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the partial payout');

    assert.equal(json(await post(h, `/v1/transactions/${id}/release`, {}, key)).status, 'confirmed');
    await advance(h, 1, key);
    const payouts = (await listPayouts(h, '', key)).data;
    assert.deepEqual(
      payouts.map((p) => [p.status, p.amount]),
      [
        ['paid', 600],
        ['paid', 400],
      ],
    );
    const done = await transaction(h, id, key);
    assert.equal(done.status, 'released');
    assert.equal(done.settlement_status, 'released');
    assert.equal((await eventsOf(h, m.merchant_id, 'transaction.completed')).length, 1);
    assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 2, capture: 1, payout: 2, payout_paid: 2 });
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('makes one payout per currency', async () => {
    const { m, key } = await merchantPayingOut(h);
    await approvedTransaction(h, { amount: 100.25, currency: 'KES' }, key);
    await approvedTransaction(h, { amount: 5000, currency: 'UGX' }, key);
    await approvedTransaction(h, { amount: 2.5, currency: 'KES' }, key);
    await approvedTransaction(h, { amount: 19.99, currency: 'USD' }, key);
    await advance(h, 1, key);
    const byCurrency = Object.fromEntries(
      (await listPayouts(h, '', key)).data.map((p) => [
        p.currency,
        [p.status, p.amount, p.amount_minor, p.line_count],
      ]),
    );
    assert.deepEqual(byCurrency, {
      KES: ['paid', 102.75, 10275, 2],
      UGX: ['paid', 5000, 5000, 1],
      USD: ['paid', 19.99, 1999, 1],
    });
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('takes only approved funds: a paid transaction not yet released is not paid out', async () => {
    const { m, key } = await merchantPayingOut(h);
    const held = await paidTransaction(h, { amount: 300 }, key);
    const approved = await approvedTransaction(h, { amount: 200 }, key);
    await advance(h, 1, key);
    const [payout] = (await listPayouts(h, '', key)).data;
    assert.deepEqual(
      payout?.lines.map((l) => l.service_transaction_id),
      [approved.service_transaction_id],
    );
    assert.equal((await transaction(h, held.service_transaction_id, key)).status, 'reserved');
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });
});
