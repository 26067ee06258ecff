import { newId } from '../domain/ids.ts';
import { MOVEMENTS } from '../domain/ledger.ts';
import { maskedDestination, type PayoutDestination } from '../rails/payout.ts';
import type { Queryable } from '../store/db.ts';
import { type ClaimedJob, deleteJobs, newJob, scheduleJobs } from '../store/jobs.ts';
import { insertLedgerRows, type LedgerRow } from '../store/ledger.ts';
import { nextMidnightUtc, schedulePayoutRunAt } from '../store/payout-runs.ts';
import { findPayoutSettings } from '../store/payout-settings.ts';
import {
  type BatchedFunds,
  batchUnbatchedFunds,
  insertPayoutLines,
  insertPayouts,
  markPayoutInTransit,
  type PayoutLineRow,
  type PayoutRow,
  unbatchedFundsWait,
} from '../store/payouts.ts';
import type { Owner } from '../store/transactions.ts';
import { journalRows } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { payoutDestination, payoutRail } from './payout-rails.ts';

/** Funds a run could not take (another worker or request held their transaction) are tried again this soon. */
const SKIPPED_RETRY_MS = 60_000;

/**
 * Groups batched funds per currency into one payout each, with one line and one `payout`
 * journal row (seller payable → payout clearing) per transaction, all written in a few
 * statements whatever the number of lines.
 */
async function writePayouts(
  tx: Queryable,
  owner: Owner,
  funds: readonly BatchedFunds[],
  destination: PayoutDestination,
  now: Date,
): Promise<PayoutRow[]> {
  const byCurrency = new Map<string, BatchedFunds[]>();
  for (const f of funds) {
    const group = byCurrency.get(f.currency);
    if (group) group.push(f);
    else byCurrency.set(f.currency, [f]);
  }
  const payouts: PayoutRow[] = [];
  const lines: PayoutLineRow[] = [];
  const ledger: LedgerRow[] = [];
  for (const currency of [...byCurrency.keys()].sort()) {
    const group = byCurrency.get(currency) ?? [];
    const id = newId('payout', now.getTime());
    let amount = 0n;
    for (const f of group) {
      amount += f.line_minor;
      lines.push({ payout_id: id, transaction_id: f.id, amount_minor: f.line_minor });
      const txn = { id: f.id, merchant_id: owner.merchantId, livemode: owner.livemode, currency };
      ledger.push(...journalRows(txn, MOVEMENTS.payout(f.line_minor), now));
    }
    payouts.push({
      id,
      merchant_id: owner.merchantId,
      livemode: owner.livemode,
      status: 'pending',
      method: destination.method,
      rail_destination: destination,
      destination: maskedDestination(destination),
      amount_minor: amount,
      currency,
      line_count: group.length,
      rail_reference: null,
      failure_reason: null,
      created_at: now,
      paid_at: null,
      updated_at: now,
    });
  }
  await insertPayouts(tx, payouts);
  await insertPayoutLines(tx, lines);
  await insertLedgerRows(tx, ledger);
  return payouts;
}

/**
 * The payout_run job (subject `${merchantId}:test|live`): takes the environment's approved funds
 * not yet in a payout, makes one payout per currency (pending), and asks the payout rail to
 * send each; a payout the rail takes is in_transit, and the rail's result comes back as a
 * payout_settle job. Transaction states do not change here (they stay approved_for_release).
 * All in the job's database transaction.
 */
export async function payoutRunJob(
  _ctx: ServiceContext,
  tx: Queryable,
  job: ClaimedJob,
  now: Date,
): Promise<void> {
  const owner: Owner = { merchantId: job.merchant_id, livemode: job.livemode };
  // This run's own row goes first, so a run scheduled below is a new row rather than this one,
  // which the worker deletes once the handler returns.
  await deleteJobs(tx, [job.id]);
  const destination = payoutDestination(await findPayoutSettings(tx, owner), owner.livemode);
  if (!destination) {
    // Live mode without a payout method: the funds wait. Saving settings schedules a run at once.
    if (await unbatchedFundsWait(tx, owner)) await schedulePayoutRunAt(tx, owner, nextMidnightUtc(now), now);
    return;
  }
  const funds = await batchUnbatchedFunds(tx, owner);
  const payouts = await writePayouts(tx, owner, funds, destination, now);
  const rail = payoutRail(tx, { ...owner, now });
  for (const payout of payouts) {
    const answer = await rail.submit({
      payoutId: payout.id,
      amountMinor: payout.amount_minor,
      currency: payout.currency,
      destination,
    });
    if (answer.accepted) {
      await markPayoutInTransit(tx, payout.id, answer.railReference, now);
    } else {
      // No rail took it (live mode, none wired): it stays pending, and its settle job keeps
      // asking, its error kept on the job for operators (docs/payouts.md).
      await scheduleJobs(tx, [
        newJob(
          {
            kind: 'payout_settle',
            merchantId: owner.merchantId,
            livemode: owner.livemode,
            subjectId: payout.id,
            runAt: now,
          },
          now,
        ),
      ]);
    }
  }
  // Funds whose transaction someone else held were skipped, never waited for: try again soon.
  if (await unbatchedFundsWait(tx, owner)) {
    await schedulePayoutRunAt(tx, owner, new Date(now.getTime() + SKIPPED_RETRY_MS), now);
  }
}
