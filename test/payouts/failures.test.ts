import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountBalances } from '../../src/store/ledger.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { type Harness, json } from '../helpers/harness.ts';
import { assertLedgerSound, journalKinds } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  approvedTransaction,
  eventsOf,
  get,
  INSTANT,
  listPayouts,
  merchantPayingOut,
  move,
  type Payout,
  post,
  secondsToMidnight,
  transaction,
} from './helpers.ts';

async function payoutRunAt(h: Harness, merchantId: string, livemode: boolean): Promise<Date | undefined> {
  const { rows } = await h.ctx.db.query<{ run_at: Date }>(
    `SELECT run_at FROM scheduled_jobs WHERE kind = 'payout_run' AND merchant_id = $1 AND livemode = $2`,
    [merchantId, livemode],
  );
  return rows[0]?.run_at;
}

describe('failed payouts, reversals and live mode', () => {
  const h = suiteHarness();

  it('a payout to a destination ending 0001 fails, its funds return, and a corrected method pays them at once', async () => {
    const { m, key } = await merchantPayingOut(h, { method: 'mobile_money', phone: '+254700000001' });
    const t = await approvedTransaction(h, { amount: 500 }, key);
    const id = t.service_transaction_id;
    await advance(h, await secondsToMidnight(h, key), key);

    const [failed] = (await listPayouts(h, '', key)).data;
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.destination, '****0001');
    assert.match(String(failed?.failure_reason), /does not exist or cannot receive money.*0001/);
    assert.equal(failed?.paid_at, null);
    assert.deepEqual(
      failed?.lines.map((l) => l.service_transaction_id),
      [id],
    );
    // The funds are approved for release again, waiting for the next run.
    const back = await transaction(h, id, key);
    assert.equal(back.status, 'confirmed');
    assert.equal(back.settlement_status, 'approved_for_release');
    assert.deepEqual(await journalKinds(h.ctx.db, id), {
      approve: 1,
      capture: 1,
      payout: 1,
      payout_returned: 1,
    });
    const failedEvents = await eventsOf(h, m.merchant_id, 'payout.failed');
    assert.equal(failedEvents.length, 1);
    assert.equal(failedEvents[0]?.data.id, failed?.id);
    assert.equal(failedEvents[0]?.data.failure_reason, failed?.failure_reason);
    assert.equal(failedEvents[0]?.service_transaction_id, null);
    // Daily schedule: the retry is the next midnight UTC.
    const retry = await payoutRunAt(h, m.merchant_id, false);
    assert.ok(retry);
    assert.equal(retry.getTime() % 86_400_000, 0, 'at midnight UTC');
    assert.ok(retry.getTime() > Date.parse(String(failed?.created_at)));
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the failed payout');

    // New settings after a failure bring the run forward to now.
    const fixed = await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254700009999' },
      key,
    );
    assert.equal(fixed.statusCode, 200, fixed.body);
    await advance(h, 1, key);
    const payouts = (await listPayouts(h, '', key)).data;
    assert.deepEqual(
      payouts.map((p) => [p.status, p.destination, p.amount]),
      [
        ['paid', '****9999', 500],
        ['failed', '****0001', 500],
      ],
    );
    const done = await transaction(h, id, key);
    assert.equal(done.status, 'released');
    assert.deepEqual(await journalKinds(h.ctx.db, id), {
      approve: 1,
      capture: 1,
      payout: 2,
      payout_paid: 1,
      payout_returned: 1,
    });
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('on the instant schedule a failed payout is tried again no sooner than an hour later', async () => {
    const { m, key } = await merchantPayingOut(h, { ...INSTANT, phone: '+254700000002' });
    await approvedTransaction(h, { amount: 42 }, key);
    await advance(h, 1, key);
    const first = (await listPayouts(h, '', key)).data;
    assert.deepEqual(
      first.map((p) => p.status),
      ['failed'],
    );
    assert.match(String(first[0]?.failure_reason), /limit.*0002/);

    await advance(h, 59 * 60, key);
    assert.equal((await listPayouts(h, '', key)).data.length, 1, 'no retry within the hour');
    await advance(h, 2 * 60, key);
    const again = (await listPayouts(h, '', key)).data;
    assert.deepEqual(
      again.map((p) => p.status),
      ['failed', 'failed'],
    );
    const gap = Date.parse(String(again[0]?.created_at)) - Date.parse(String(again[1]?.created_at));
    assert.ok(gap >= 60 * 60 * 1000, `retried after ${gap} ms`);
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('pays by bank transfer, showing only the last four digits of the account', async () => {
    const { key } = await merchantPayingOut(h, {
      method: 'bank_transfer',
      bank_code: '01',
      account_number: '0123456789',
      schedule: 'instant',
    });
    await approvedTransaction(h, { amount: 10 }, key);
    await advance(h, 1, key);
    const [payout] = (await listPayouts(h, '', key)).data;
    assert.equal(payout?.status, 'paid');
    assert.equal(payout?.method, 'bank_transfer');
    assert.equal(payout?.destination, '****6789');
    const raw = JSON.stringify(await get(h, `/v1/payouts/${payout?.id}`, key));
    assert.ok(!raw.includes('0123456789'), 'the full account number never shows');
  });

  it('a bank account ending 0001 fails like a phone number does', async () => {
    const { m, key } = await merchantPayingOut(h, {
      method: 'bank_transfer',
      bank_code: 'KCBLKENX',
      account_number: '1100000001',
      schedule: 'instant',
    });
    await approvedTransaction(h, { amount: 10 }, key);
    await advance(h, 1, key);
    const [payout] = (await listPayouts(h, '', key)).data;
    assert.equal(payout?.status, 'failed');
    assert.equal(payout?.method, 'bank_transfer');
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('reverses a paid payout: reversed, money owed to the merchant, transactions released/reversed, payout.failed', async () => {
    const { m, key } = await merchantPayingOut(h);
    const a = await approvedTransaction(h, { amount: 100 }, key);
    const b = await approvedTransaction(h, { amount: 50 }, key);
    await advance(h, 1, key);
    const [paid] = (await listPayouts(h, '', key)).data;
    assert.equal(paid?.status, 'paid');

    const res = await post(h, `/v1/test_helpers/payouts/${paid?.id}/reverse`, {}, key);
    assert.equal(res.statusCode, 200, res.body);
    const reversed = json<Payout>(res);
    assert.equal(reversed.status, 'reversed');
    assert.equal(reversed.id, paid?.id);
    assert.equal(reversed.paid_at, paid?.paid_at);
    assert.match(String(reversed.failure_reason), /reversed/);
    assert.deepEqual(await get<Payout>(h, `/v1/payouts/${paid?.id}`, key), reversed);

    for (const t of [a, b]) {
      const after = await transaction(h, t.service_transaction_id, key);
      assert.equal(after.status, 'released', 'the status does not change');
      assert.equal(after.settlement_status, 'reversed');
      assert.deepEqual(await journalKinds(h.ctx.db, t.service_transaction_id), {
        approve: 1,
        capture: 1,
        payout: 1,
        payout_paid: 1,
        payout_reversed: 1,
      });
    }
    const failedEvents = await eventsOf(h, m.merchant_id, 'payout.failed');
    assert.equal(failedEvents.length, 1);
    assert.equal(failedEvents[0]?.data.status, 'reversed');
    assert.equal(failedEvents[0]?.data.id, paid?.id);
    // No status changed, so no status_changed event beyond the release.
    const changes = await eventsOf(h, m.merchant_id, 'transaction.status_changed');
    assert.equal(changes.filter((e) => e.previous_status === 'released').length, 0);
    // The money is back at the service and owed to the merchant.
    const balances = await accountBalances(h.ctx.db, m.merchant_id);
    const of = (account: string) => balances.find((x) => x.account === account)?.balance_minor ?? 0n;
    assert.equal(of('merchant_balance'), -15000n);
    assert.equal(of('rail_clearing'), 15000n);
    await assertLedgerSound(h.ctx.db, m.merchant_id);

    const again = await post(h, `/v1/test_helpers/payouts/${paid?.id}/reverse`, {}, key);
    assertErrorEnvelope(again, 409, 'conflict', 'conflict');
  });

  it('refuses to reverse a payout that is not paid (409), one it cannot see (404), and with a live key (403)', async () => {
    const { m, key } = await merchantPayingOut(h, { ...INSTANT, phone: '+254700000001' }, { verified: true });
    await approvedTransaction(h, { amount: 20 }, key);
    await advance(h, 1, key);
    const [failed] = (await listPayouts(h, '', key)).data;
    assert.equal(failed?.status, 'failed');
    const url = `/v1/test_helpers/payouts/${failed?.id}/reverse`;
    assertErrorEnvelope(await post(h, url, {}, key), 409, 'conflict', 'conflict');

    const other = await h.newMerchant();
    assertErrorEnvelope(await post(h, url, {}, other.test_key), 404, 'not_found', 'not_found');
    assertErrorEnvelope(
      await post(h, '/v1/test_helpers/payouts/po_nope/reverse', {}, key),
      404,
      'not_found',
      'not_found',
    );
    assertErrorEnvelope(await post(h, url, {}, m.live_key), 403, 'permission_denied', 'permission_denied');
    assertErrorEnvelope(await post(h, url, { extra: 1 }, key), 400, 'invalid_request', 'invalid_request');
  });

  it('replays a reversal under the same idempotency key', async () => {
    const { m, key } = await merchantPayingOut(h);
    await approvedTransaction(h, { amount: 20 }, key);
    await advance(h, 1, key);
    const [paid] = (await listPayouts(h, '', key)).data;
    const send = () =>
      h.request({
        method: 'POST',
        url: `/v1/test_helpers/payouts/${paid?.id}/reverse`,
        payload: {},
        key,
        headers: { 'idempotency-key': 'reverse-1' },
      });
    const first = await send();
    const second = await send();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(second), json(first));
    assert.equal((await eventsOf(h, m.merchant_id, 'payout.failed')).length, 1, 'reversed once');
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });

  it('live mode: no payout until a method is set, then the payout stays pending (no live rail), its error kept', async () => {
    const m = await h.newMerchant({ verified: true });
    const key = m.live_key;
    const settings = await get(h, '/v1/payout_settings', key);
    assert.equal(settings.method, null);
    assert.equal(settings.simulated, false);

    const created = await post(h, '/v1/transactions', { amount: 300, title: 'Live sale' }, key);
    assert.equal(created.statusCode, 201, created.body);
    const id = String(json(created).service_transaction_id);
    // No live collection rail in tests: the capture is applied as the rail's callback would be.
    await move(h, id, 'capture');
    await move(h, id, 'confirm');
    const runAt = await payoutRunAt(h, m.merchant_id, true);
    assert.ok(runAt, 'approval scheduled the daily run');

    const live = { merchantId: m.merchant_id, livemode: true };
    h.clock.advance((runAt.getTime() - h.clock.now().getTime()) / 1000 + 1);
    assert.equal(await runDueJobs(h.ctx, live), 1);
    assert.deepEqual((await listPayouts(h, '', key)).data, [], 'no method: the funds wait');
    const next = await payoutRunAt(h, m.merchant_id, true);
    assert.ok(next && next > runAt, 'the run looks again the next day');
    assert.equal((await transaction(h, id, key)).status, 'confirmed');

    const saved = await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254711223344' },
      key,
    );
    assert.equal(saved.statusCode, 200, saved.body);
    h.clock.advance(((next?.getTime() ?? 0) - h.clock.now().getTime()) / 1000 + 1);
    await runDueJobs(h.ctx, live);
    const [pending] = (await listPayouts(h, '', key)).data;
    assert.equal(pending?.status, 'pending');
    assert.equal(pending?.livemode, true);
    assert.equal(pending?.amount, 300);
    assert.equal((await transaction(h, id, key)).status, 'confirmed', 'not released without money moving');
    const { rows } = await h.ctx.db.query<{ last_error: string | null; attempts: number }>(
      `SELECT last_error, attempts FROM scheduled_jobs WHERE kind = 'payout_settle' AND subject_id = $1`,
      [pending?.id],
    );
    assert.equal(rows.length, 1, 'the payout keeps a job that offers it to the rail');
    assert.match(String(rows[0]?.last_error), /No live payout rail/);
    assert.equal(
      (await listPayouts(h, '', m.test_key)).data.length,
      0,
      'test mode sees none of the live payouts',
    );
    await assertLedgerSound(h.ctx.db, m.merchant_id);
  });
});
