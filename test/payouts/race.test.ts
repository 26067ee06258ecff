import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { DB_KIND, json } from '../helpers/harness.ts';
import { assertEventTrails, assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  listPayouts,
  merchantPayingOut,
  type Payout,
  paidTransaction,
  post,
  transaction,
} from './helpers.ts';

/**
 * Releases schedule payout runs while payout runs (and settlements) are running. A run takes its
 * transactions with SKIP LOCKED and never waits for a release; a release may wait for the run's
 * job row, and a settlement for a release's transaction, but nothing waits in a circle. On
 * PostgreSQL they interleave for real; PGlite runs one database transaction at a time.
 */
const PER_WAVE = DB_KIND === 'postgres' ? 30 : 10;
const WAVES = 3;
const WORKERS = 3;

describe(`releases racing payout runs finish, with sound books (${DB_KIND})`, () => {
  const h = suiteHarness();

  it('every release succeeds, every approved amount is paid out once, and no job hits a deadlock', async () => {
    const { m, key } = await merchantPayingOut(h);
    const ids: string[] = [];
    const amountOf = new Map<string, number>();
    let total = 0;
    for (let i = 0; i < PER_WAVE * WAVES; i++) {
      const amount = 10 + i;
      const t = await paidTransaction(h, { amount }, key);
      ids.push(t.service_transaction_id);
      amountOf.set(t.service_transaction_id, amount * 100);
      total += amount * 100;
      assert.equal(
        json(await post(h, `/v1/transactions/${t.service_transaction_id}/deliver`, {}, key)).status,
        'delivered',
      );
    }
    const filter = { merchantId: m.merchant_id, livemode: false };

    for (let wave = 0; wave < WAVES; wave++) {
      const batch = ids.slice(wave * PER_WAVE, (wave + 1) * PER_WAVE);
      let releasing = true;
      // Workers keep running due payout jobs for as long as the releases go on, and once more after.
      const workers = Array.from({ length: WORKERS }, async () => {
        let ran = 0;
        while (releasing) {
          ran += await runDueJobs(h.ctx, filter);
          // Let the requests run: PGlite can answer without ever leaving the microtask queue.
          await new Promise((resolve) => setImmediate(resolve));
        }
        return ran + (await runDueJobs(h.ctx, filter));
      });
      const releases = await Promise.all(
        batch.map((id, i) =>
          // Every other one is released in part, then in full: two approvals, two payout lines.
          i % 2 === 0
            ? post(h, `/v1/transactions/${id}/release`, {}, key)
            : post(h, `/v1/transactions/${id}/release`, { amount: 5 }, key).then(() =>
                post(h, `/v1/transactions/${id}/release`, {}, key),
              ),
        ),
      );
      releasing = false;
      const ran = await Promise.all(workers);
      for (const res of releases) assert.equal(res.statusCode, 200, res.body);
      assert.ok(ran.reduce((a, b) => a + b, 0) > 0, 'the workers ran payout jobs while the releases went on');
      await assertLedgerSound(h.ctx.db, m.merchant_id, `wave ${wave}`);
    }

    // Funds a run skipped are retried a minute later: let the clock get there.
    await advance(h, 61, key);
    await advance(h, 61, key);

    const { rows: errors } = await h.ctx.db.query<{ kind: string; last_error: string }>(
      `SELECT kind, last_error FROM scheduled_jobs WHERE merchant_id = $1 AND last_error IS NOT NULL`,
      [m.merchant_id],
    );
    assert.deepEqual(errors, [], 'no job failed (a deadlock would be kept here)');
    for (const id of ids) {
      const t = await transaction(h, id, key);
      assert.deepEqual([t.status, t.settlement_status], ['released', 'released'], id);
    }
    const payouts: Payout[] = [];
    let after = '';
    for (;;) {
      const page = await listPayouts(h, `?limit=100${after ? `&starting_after=${after}` : ''}`, key);
      payouts.push(...page.data);
      if (!page.has_more) break;
      after = page.data.at(-1)?.id ?? '';
    }
    assert.ok(payouts.every((p) => p.status === 'paid'));
    assert.equal(
      payouts.reduce((sum, p) => sum + p.amount_minor, 0),
      total,
      'the paid payouts add up to every approved amount, once',
    );
    const { rows: lines } = await h.ctx.db.query<{ transaction_id: string; n: number; total: string }>(
      `SELECT transaction_id, count(*)::int AS n, sum(amount_minor)::text AS total FROM payout_lines
        WHERE transaction_id = ANY($1::text[]) GROUP BY transaction_id`,
      [ids],
    );
    assert.equal(lines.length, ids.length);
    for (const l of lines) {
      assert.equal(Number(l.total), amountOf.get(l.transaction_id), `lines of ${l.transaction_id}`);
      assert.ok(l.n === 1 || l.n === 2);
    }
    await assertLedgerSound(h.ctx.db, m.merchant_id);
    await assertEventTrails(h.ctx.db, m.merchant_id);
  });
});
