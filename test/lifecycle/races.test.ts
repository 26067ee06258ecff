import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { applyMoves } from '../../src/operations/apply-moves.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { reportCollectionResult, startPayment } from '../../src/operations/payments.ts';
import { claimDueJobs, deleteJobs, scheduleJobs } from '../../src/store/jobs.ts';
import { lockTransactions } from '../../src/store/transaction-state.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { DB_KIND, type Harness, json, startHarness } from '../helpers/harness.ts';
import {
  assertEventTrails,
  assertLedgerSound,
  assertWellFormed,
  errorCode,
  journalKinds,
  setClockOffset,
  statusChanges,
} from '../helpers/ledger-invariants.ts';

/*
 * Two (or more) things happen to one transaction at once. Races are probabilistic, so each runs
 * many times; whichever side wins, exactly one must, and the books must still add up.
 */

/**
 * Rounds per race. PostgreSQL interleaves for real, so many rounds find the rare orders; PGlite runs
 * one database transaction at a time, so its rounds repeat two orders and a few suffice.
 */
const ITERATIONS = Number(process.env.RACE_ITERATIONS ?? (DB_KIND === 'postgres' ? 20 : 6));
const DAY_MS = 86_400_000;

/**
 * Starts both at once, the first one first on even rounds and the second first on odd ones (on
 * PGlite, which runs one database transaction at a time, the one started first wins); the
 * results come back in argument order.
 */
async function together<A, B>(
  round: number,
  a: () => PromiseLike<A>,
  b: () => PromiseLike<B>,
): Promise<[A, B]> {
  // Promise.resolve starts an inject at once (it is lazy until something calls then).
  if (round % 2 === 0) {
    const pa = Promise.resolve(a());
    const pb = Promise.resolve(b());
    return [await pa, await pb];
  }
  const pb = Promise.resolve(b());
  const pa = Promise.resolve(a());
  return [await pa, await pb];
}

describe(`racing operations have exactly one winner (${DB_KIND})`, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const post = (merchant: CreatedMerchant, url: string, payload: Record<string, unknown> = {}) =>
    h.request({ method: 'POST', url, payload, key: merchant.test_key });

  const reserved = async (merchant: CreatedMerchant, body: Record<string, unknown> = {}): Promise<string> => {
    const created = await post(merchant, '/v1/transactions', { amount: 1000, title: 'Race', ...body });
    assert.equal(created.statusCode, 201, created.body);
    const id = String(json(created).service_transaction_id);
    const paid = await post(merchant, `/v1/test_helpers/transactions/${id}/pay`, {
      method: 'card',
      card_number: '4242424242424242',
    });
    assert.equal(json(paid).status, 'reserved', paid.body);
    return id;
  };

  const delivered = async (
    merchant: CreatedMerchant,
    body: Record<string, unknown> = {},
  ): Promise<string> => {
    const id = await reserved(merchant, body);
    const res = await post(merchant, `/v1/transactions/${id}/deliver`);
    assert.equal(json(res).status, 'delivered', res.body);
    return id;
  };

  const transaction = async (merchant: CreatedMerchant, id: string) =>
    json(await h.request({ method: 'GET', url: `/v1/transactions/${id}`, key: merchant.test_key }));

  /** Exactly one 200; every other answer a 4xx with the given code. Returns the winner's index. */
  const oneWinner = (responses: LightMyRequestResponse[], loserCode = 'conflict'): number => {
    for (const [i, res] of responses.entries()) assertWellFormed(res, `racer ${i}`);
    const winners = responses.flatMap((res, i) => (res.statusCode === 200 ? [i] : []));
    assert.equal(
      winners.length,
      1,
      `expected one winner: ${responses.map((r) => `${r.statusCode} ${r.body}`).join(' | ')}`,
    );
    for (const res of responses) {
      if (res.statusCode !== 200) assert.equal(errorCode(res), loserCode, res.body);
    }
    return winners[0] as number;
  };

  const sound = async (merchant: CreatedMerchant) => {
    await assertLedgerSound(h.ctx.db, merchant.merchant_id);
    await assertEventTrails(h.ctx.db, merchant.merchant_id);
  };

  it('confirm and cancel at once on a reserved transaction: one wins, and the money follows it', async (t) => {
    const merchant = await h.newMerchant();
    const wins = { confirm: 0, cancel: 0 };
    for (let i = 0; i < ITERATIONS; i++) {
      const id = await reserved(merchant);
      const responses = await together(
        i,
        () => post(merchant, `/v1/transactions/${id}/confirm`),
        () => post(merchant, `/v1/transactions/${id}/cancel`),
      );
      const winner = oneWinner(responses);
      const final = await transaction(merchant, id);
      const changes = await statusChanges(h.ctx.db, id);
      if (winner === 0) {
        wins.confirm++;
        assert.equal(final.status, 'confirmed');
        assert.equal(final.settlement_status, 'approved_for_release');
        assert.equal(final.amount_released, 1000);
        assert.equal(final.amount_refunded, 0);
        assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 1, capture: 1 });
      } else {
        wins.cancel++;
        assert.equal(final.status, 'refunded');
        assert.equal(final.settlement_status, 'refund_pending');
        assert.equal(final.amount_released, 0);
        assert.equal(final.amount_refunded, 1000);
        assert.deepEqual(await journalKinds(h.ctx.db, id), { capture: 1, refund: 1 });
      }
      assert.equal(
        changes.filter((c) => c.previous_status === 'reserved').length,
        1,
        JSON.stringify(changes),
      );
      assert.deepEqual(json(responses[winner] as LightMyRequestResponse).status, final.status);
    }
    t.diagnostic(`winners: ${JSON.stringify(wins)}`);
    await sound(merchant);
  });

  it('three payments at once on one transaction: one captures it, the others are conflicts', async () => {
    const merchant = await h.newMerchant();
    for (let i = 0; i < ITERATIONS; i++) {
      const created = await post(merchant, '/v1/transactions', { amount: 1000, title: 'Race' });
      const id = String(json(created).service_transaction_id);
      const pay = (instrument: Record<string, unknown>) =>
        Promise.resolve(post(merchant, `/v1/test_helpers/transactions/${id}/pay`, instrument));
      const card = { method: 'card', card_number: '4242424242424242' };
      const phone = { method: 'mobile_money', phone: '+254700000000' };
      const responses = await Promise.all(
        i % 2 === 0 ? [pay(card), pay(phone), pay(card)] : [pay(phone), pay(card), pay(phone)],
      );
      const winner = oneWinner(responses);
      assert.equal(json(responses[winner] as LightMyRequestResponse).status, 'reserved');
      assert.deepEqual(await journalKinds(h.ctx.db, id), { capture: 1 });
      const { rows } = await h.ctx.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM payment_attempts WHERE transaction_id = $1 GROUP BY status',
        [id],
      );
      assert.deepEqual(rows, [{ status: 'succeeded', n: 1 }]);
    }
    await sound(merchant);
  });

  it('two full releases at once on a delivered transaction: one releases, the other is a conflict', async () => {
    const merchant = await h.newMerchant();
    for (let i = 0; i < ITERATIONS; i++) {
      const id = await delivered(merchant);
      oneWinner(
        await Promise.all([
          post(merchant, `/v1/transactions/${id}/release`),
          post(merchant, `/v1/transactions/${id}/release`),
        ]),
      );
      const final = await transaction(merchant, id);
      assert.equal(final.status, 'confirmed');
      assert.equal(final.amount_released, 1000);
      assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 1, capture: 1 });
      assert.deepEqual(
        (await statusChanges(h.ctx.db, id)).filter((c) => c.previous_status === 'delivered'),
        [{ previous_status: 'delivered', status: 'confirmed', settlement_status: 'approved_for_release' }],
      );
    }
    await sound(merchant);
  });

  it('two partial releases that together exceed what is held: one is refused, the hold never goes below zero', async (t) => {
    const wins = { 600: 0, 700: 0 };
    const merchant = await h.newMerchant();
    for (let i = 0; i < ITERATIONS; i++) {
      const id = await delivered(merchant);
      const responses = await together(
        i,
        () => post(merchant, `/v1/transactions/${id}/release`, { amount: 600 }),
        () => post(merchant, `/v1/transactions/${id}/release`, { amount: 700 }),
      );
      // The loser asked for more than is still held once the winner's part is gone: a 400 on amount.
      const winner = oneWinner(responses, 'invalid_request');
      const loser = responses[1 - winner] as LightMyRequestResponse;
      assert.equal(json<{ error: { param: string } }>(loser).error.param, 'amount');
      const won = winner === 0 ? 600 : 700;
      wins[won]++;
      const final = await transaction(merchant, id);
      assert.equal(final.status, 'delivered');
      assert.equal(final.amount_released, won);
      assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 1, capture: 1 });
    }
    t.diagnostic(`winners: ${JSON.stringify(wins)}`);
    await sound(merchant);
  });

  it('two partial releases that together make the whole amount both succeed, and the second confirms', async () => {
    const merchant = await h.newMerchant();
    for (let i = 0; i < ITERATIONS; i++) {
      const id = await delivered(merchant);
      const responses = await together(
        i,
        () => post(merchant, `/v1/transactions/${id}/release`, { amount: 400 }),
        () => post(merchant, `/v1/transactions/${id}/release`, { amount: 600 }),
      );
      // (Each answer is the transaction read after its commit, so both may already show the end.)
      for (const res of responses) assert.equal(res.statusCode, 200, res.body);
      const final = await transaction(merchant, id);
      assert.equal(final.status, 'confirmed');
      assert.equal(final.amount_released, 1000);
      assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 2, capture: 1 });
      assert.deepEqual(
        (await statusChanges(h.ctx.db, id)).filter((c) => c.previous_status === 'delivered'),
        [{ previous_status: 'delivered', status: 'confirmed', settlement_status: 'approved_for_release' }],
      );
    }
    await sound(merchant);
  });

  it('release while the scheduler auto-releases at the review deadline: one of them moves the money', async (t) => {
    const wins = { api: 0, scheduler: 0 };
    for (let i = 0; i < ITERATIONS; i++) {
      const merchant = await h.newMerchant();
      const id = await delivered(merchant, { satisfaction_days: 1 });
      // Another process moves the clock past the review deadline.
      await setClockOffset(h.ctx.db, merchant.merchant_id, DAY_MS + 60_000);
      const [res, ran] = await together(
        i,
        () => post(merchant, `/v1/transactions/${id}/release`),
        () => runDueJobs(h.ctx, { merchantId: merchant.merchant_id }),
      );
      assertWellFormed(res, 'release');
      if (res.statusCode === 200) wins.api++;
      else {
        assert.equal(errorCode(res), 'conflict', res.body);
        assert.equal(ran, 1, 'the scheduler won, so it ran the auto-release');
        wins.scheduler++;
      }
      const final = await transaction(merchant, id);
      assert.equal(final.status, 'confirmed');
      assert.equal(final.settlement_status, 'approved_for_release');
      assert.equal(final.amount_released, 1000);
      assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 1, capture: 1 });
      assert.deepEqual(
        (await statusChanges(h.ctx.db, id)).filter((c) => c.previous_status === 'delivered'),
        [{ previous_status: 'delivered', status: 'confirmed', settlement_status: 'approved_for_release' }],
      );
      const { rows } = await h.ctx.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM scheduled_jobs WHERE subject_id = $1',
        [id],
      );
      assert.equal(rows[0]?.n, 0, 'no auto-release is left to run');
      await sound(merchant);
    }
    t.diagnostic(`winners: ${JSON.stringify(wins)}`);
  });

  it('a release does not wait for a worker holding its auto-release job, so the two cannot deadlock', {
    skip: DB_KIND === 'pglite' && 'PGlite runs one database transaction at a time',
  }, async () => {
    const merchant = await h.newMerchant();
    const id = await delivered(merchant, { satisfaction_days: 1 });
    await setClockOffset(h.ctx.db, merchant.merchant_id, DAY_MS + 60_000);
    // A worker, step by step: it claims the due job, and only then locks the transaction.
    await h.ctx.db.transaction(async (tx) => {
      const claimed = await claimDueJobs(tx, h.clock.now(), { merchantId: merchant.merchant_id, limit: 10 });
      assert.deepEqual(
        claimed.map((j) => j.kind),
        ['auto_release'],
      );
      const { rows } = await tx.query<{ xid: string }>('SELECT pg_current_xact_id()::xid::text AS xid');
      const worker = rows[0]?.xid;
      let answered = false;
      const release = Promise.resolve(post(merchant, `/v1/transactions/${id}/release`)).finally(() => {
        answered = true;
      });
      // Until the release answers, check it is not queued behind the worker's locks.
      while (!answered) {
        const waiting = await h.ctx.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
              WHERE locktype = 'transactionid' AND NOT granted AND transactionid::text = $1`,
          [worker],
        );
        if (waiting.rows[0]?.n) assert.fail('the release waits for the job the worker holds');
      }
      assert.equal((await release).statusCode, 200);
      // The worker goes on: under the transaction's lock the auto-release no longer applies.
      const locked = await lockTransactions(tx, [id]);
      assert.equal(locked[0]?.status, 'confirmed');
      const now = new Date(h.clock.now().getTime() + DAY_MS + 60_000);
      const requests = locked.map((row) => ({ row, action: 'auto_release' as const, now }));
      assert.deepEqual(await applyMoves(h.ctx, tx, requests, 'skip'), []);
      await deleteJobs(
        tx,
        claimed.map((j) => j.id),
      );
    });
    assert.deepEqual(await journalKinds(h.ctx.db, id), { approve: 1, capture: 1 });
    await sound(merchant);
  });

  it('a card payment completing while the scheduler expires the window and times out the attempt: one outcome, no deadlock', async (t) => {
    const outcomes = { paid: 0, timed_out: 0 };
    for (let i = 0; i < ITERATIONS; i++) {
      const merchant = await h.newMerchant();
      const created = await post(merchant, '/v1/transactions', { amount: 1000, title: 'Race' });
      const id = String(json(created).service_transaction_id);
      // The buyer is at the 3-D Secure challenge: the attempt waits, with its timeout scheduled.
      const attempt = await startPayment(h.ctx, id, { method: 'card', card_number: '4000000000003220' });
      assert.equal(attempt.status, 'requires_action');
      // The payment window's expiry falls due too (made due now, whether or not create wrote it).
      const now = h.clock.now();
      await scheduleJobs(h.ctx.db, [
        {
          id: `job_race_${i}_${merchant.merchant_id}`,
          kind: 'expire_payment',
          merchant_id: merchant.merchant_id,
          livemode: false,
          subject_id: id,
          run_at: now,
          payload: {},
          created_at: now,
        },
      ]);
      await setClockOffset(h.ctx.db, merchant.merchant_id, 120_000);
      // The buyer passes the challenge just as a worker runs both due jobs.
      const [answer, worker] = await Promise.allSettled(
        i % 2 === 0
          ? [
              reportCollectionResult(h.ctx, { attemptId: attempt.id, outcome: 'succeeded' }),
              runDueJobs(h.ctx, { merchantId: merchant.merchant_id }),
            ]
          : [
              runDueJobs(h.ctx, { merchantId: merchant.merchant_id }).then(() => undefined),
              reportCollectionResult(h.ctx, { attemptId: attempt.id, outcome: 'succeeded' }),
            ],
      );
      assert.equal(answer.status, 'fulfilled', String(answer.status === 'rejected' && answer.reason));
      assert.equal(worker.status, 'fulfilled', String(worker.status === 'rejected' && worker.reason));
      const final = await transaction(merchant, id);
      const { rows } = await h.ctx.db.query<{ status: string; failure_code: string | null }>(
        'SELECT status, failure_code FROM payment_attempts WHERE id = $1',
        [attempt.id],
      );
      const jobs = (
        await h.ctx.db.query<{ kind: string }>('SELECT kind FROM scheduled_jobs WHERE subject_id = $1', [id])
      ).rows.map((j) => j.kind);
      if (final.status === 'reserved') {
        outcomes.paid++;
        assert.equal(rows[0]?.status, 'succeeded');
        assert.deepEqual(await journalKinds(h.ctx.db, id), { capture: 1 });
        assert.deepEqual(jobs, [], 'a paid transaction does not expire');
      } else {
        // The timeout ran first: the attempt failed (a late success is ignored), and the expiry,
        // which waits while a payment is in flight, was put off to run after it.
        outcomes.timed_out++;
        assert.deepEqual(rows[0], { status: 'failed', failure_code: 'timeout' });
        assert.equal(final.status, 'pending_payment');
        assert.deepEqual(await journalKinds(h.ctx.db, id), {});
        assert.deepEqual(jobs, ['expire_payment']);
      }
      await sound(merchant);
    }
    t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`);
  });

  it('two workers over the same 200 due releases move each transaction exactly once', async () => {
    const merchant = await h.newMerchant();
    const releaseAt = new Date(h.clock.now().getTime() + 3_600_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      ids.push(
        await reserved(merchant, { release_condition: { type: 'time_based', release_at: releaseAt } }),
      );
    }
    await setClockOffset(h.ctx.db, merchant.merchant_id, 2 * 3_600_000);
    // Small batches, so the two workers take turns claiming.
    const [a, b] = await Promise.all([
      runDueJobs(h.ctx, { merchantId: merchant.merchant_id }, 25),
      runDueJobs(h.ctx, { merchantId: merchant.merchant_id }, 25),
    ]);
    assert.equal(a + b, 200, `the workers ran ${a} and ${b} jobs`);

    const { rows } = await h.ctx.db.query<{ id: string; status: string; moves: number; approvals: number }>(
      `SELECT t.id, t.status,
              (SELECT count(*)::int FROM events e WHERE e.service_transaction_id = t.id
                 AND e.type = 'transaction.status_changed' AND e.payload->>'previous_status' = 'reserved') AS moves,
              (SELECT count(*)::int FROM ledger_entries l WHERE l.transaction_id = t.id AND l.kind = 'approve') AS approvals
         FROM transactions t WHERE t.merchant_id = $1`,
      [merchant.merchant_id],
    );
    assert.equal(rows.length, 200);
    for (const r of rows) {
      assert.equal(r.status, 'confirmed', r.id);
      assert.equal(r.moves, 1, `${r.id} status_changed from reserved`);
      assert.equal(r.approvals, 1, `${r.id} approvals`);
    }
    await sound(merchant);
  });
});
