import { MOVEMENTS, type Posting } from '../domain/ledger.ts';
import { heldMinor } from '../domain/plan-move.ts';
import type { Action } from '../domain/state-machine.ts';
import type { PayoutResult } from '../rails/payout.ts';
import type { Queryable } from '../store/db.ts';
import { insertEvents } from '../store/events.ts';
import { type ClaimedJob, deleteJobs } from '../store/jobs.ts';
import { insertLedgerRows } from '../store/ledger.ts';
import { nextMidnightUtc, schedulePayoutRunAt } from '../store/payout-runs.ts';
import { findPayoutSettings } from '../store/payout-settings.ts';
import {
  findPayoutById,
  finishPayout,
  firstLinesOf,
  lockPayout,
  lockPayoutTransactions,
  markLinesPaidOut,
  markPayoutInTransit,
  type PayoutRow,
  payoutLines,
  releasedTransactionsOf,
  returnLines,
} from '../store/payouts.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { applyMoves, journalRows } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { type EventRefs, objectEvent } from './event-payloads.ts';
import { payoutRail } from './payout-rails.ts';
import { LINES_IN_LISTS_AND_EVENTS, payoutView } from './payout-view.ts';

/** Moves per applyMoves call when a big payout completes its transactions (bounded statements). */
const MOVE_CHUNK = 2000;

/** An instant schedule's failed funds are tried again no sooner than this (no hot loop). */
const INSTANT_RETRY_AFTER_FAILURE_MS = 60 * 60 * 1000;

export const REVERSED_REASON = 'The rail reversed the payout after it was paid.';

/** A payout's events are about no one transaction (resolutions 9). */
function payoutRefs(payout: PayoutRow): EventRefs {
  return {
    merchant_id: payout.merchant_id,
    livemode: payout.livemode,
    service_transaction_id: null,
    merchant_reference: null,
    merchant_order_id: null,
  };
}

async function payoutEvent(tx: Queryable, type: string, payout: PayoutRow, at: Date): Promise<void> {
  const lines = await firstLinesOf(tx, [payout.id], LINES_IN_LISTS_AND_EVENTS);
  const view = payoutView(payout, lines, LINES_IN_LISTS_AND_EVENTS);
  await insertEvents(tx, [objectEvent(type, payoutRefs(payout), view, at)]);
}

/** One journal row per line of the payout, each owned by its transaction. */
async function journalPerLine(
  tx: Queryable,
  payout: PayoutRow,
  movement: (amountMinor: bigint) => Posting[],
  at: Date,
): Promise<void> {
  const rows = (await payoutLines(tx, payout.id)).flatMap((line) =>
    journalRows(
      {
        id: line.transaction_id,
        merchant_id: payout.merchant_id,
        livemode: payout.livemode,
        currency: payout.currency,
      },
      movement(line.amount_minor),
      at,
    ),
  );
  await insertLedgerRows(tx, rows);
}

/** The state machine's move for many transactions, a bounded batch per applyMoves call. */
async function moveInChunks(
  ctx: ServiceContext,
  tx: Queryable,
  rows: readonly TransactionRow[],
  action: Action,
  now: Date,
): Promise<void> {
  for (let i = 0; i < rows.length; i += MOVE_CHUNK) {
    const chunk = rows.slice(i, i + MOVE_CHUNK).map((row) => ({ row, action, now }));
    await applyMoves(ctx, tx, chunk, 'throw');
  }
}

/**
 * Paid: each line clears to the rail (payout_paid journal row), counts as paid out, and every
 * transaction now wholly paid out moves confirmed → released (transaction.status_changed and
 * transaction.completed); then payout.paid.
 */
async function settlePaid(ctx: ServiceContext, tx: Queryable, payout: PayoutRow, now: Date): Promise<void> {
  await journalPerLine(tx, payout, MOVEMENTS.payoutPaid, now);
  const complete = (await markLinesPaidOut(tx, payout.id, now)).filter((row) => heldMinor(row) === 0n);
  await moveInChunks(ctx, tx, complete, 'payout_paid', now);
  const paid = await finishPayout(tx, payout.id, 'in_transit', 'paid', { paidAt: now }, now);
  await payoutEvent(tx, 'payout.paid', paid, now);
}

/**
 * Failed: each line's funds go back to seller payable (payout_returned) and are no longer
 * batched, so the next run takes them: the next midnight on the daily schedule, an hour later at
 * the soonest on the instant one (saving new payout settings runs at once); then payout.failed.
 */
async function settleFailed(tx: Queryable, payout: PayoutRow, reason: string, now: Date): Promise<void> {
  await journalPerLine(tx, payout, MOVEMENTS.payoutReturned, now);
  await returnLines(tx, payout.id);
  const failed = await finishPayout(tx, payout.id, 'in_transit', 'failed', { failureReason: reason }, now);
  await payoutEvent(tx, 'payout.failed', failed, now);
  const owner = { merchantId: payout.merchant_id, livemode: payout.livemode };
  const settings = await findPayoutSettings(tx, owner);
  const retryAt =
    settings?.schedule === 'instant'
      ? new Date(now.getTime() + INSTANT_RETRY_AFTER_FAILURE_MS)
      : nextMidnightUtc(now);
  await schedulePayoutRunAt(tx, owner, retryAt, now);
}

/**
 * The payout_settle job (subject: the payout id): the rail's result for a payout in transit.
 * Lock order: the payout's transactions (id order), then the payout. A payout still pending (no
 * rail took it: live mode without a payout rail) is offered to the rail again; while none takes
 * it the job fails and is retried, its error kept on the job.
 */
export async function payoutSettleJob(
  ctx: ServiceContext,
  tx: Queryable,
  job: ClaimedJob,
  now: Date,
): Promise<void> {
  const found = await findPayoutById(tx, job.subject_id);
  if (!found) return;
  await lockPayoutTransactions(tx, found.id);
  const payout = await lockPayout(tx, found.id);
  if (!payout) return;
  if (payout.status === 'pending') {
    // A rail's result for this payout would be a new job of this kind and subject: this one goes first.
    await deleteJobs(tx, [job.id]);
    const owner = { merchantId: payout.merchant_id, livemode: payout.livemode, now };
    const answer = await payoutRail(tx, owner).submit({
      payoutId: payout.id,
      amountMinor: payout.amount_minor,
      currency: payout.currency,
      destination: payout.rail_destination,
    });
    if (!answer.accepted) throw new Error(`payout ${payout.id}: ${answer.reason}`);
    await markPayoutInTransit(tx, payout.id, answer.railReference, now);
    return;
  }
  // Anything else was settled already: a repeated result changes nothing.
  if (payout.status !== 'in_transit') return;
  const result = job.payload as PayoutResult;
  if (result.outcome === 'paid') await settlePaid(ctx, tx, payout, now);
  else await settleFailed(tx, payout, result.reason, now);
}

/**
 * A paid payout the rail reversed (its test helper, or a rail's report): the money is back at the
 * service and owed to the merchant (payout_reversed: rail clearing → merchant balance), each
 * released transaction of it moves released/released → released/reversed (no status change, so
 * no status_changed event), and payout.failed tells the merchant, with status `reversed`. The
 * caller holds the payout's transactions and the payout, in that order.
 */
export async function reversePayout(
  ctx: ServiceContext,
  tx: Queryable,
  payout: PayoutRow,
  now: Date,
): Promise<PayoutRow> {
  await journalPerLine(tx, payout, MOVEMENTS.payoutReversed, now);
  await moveInChunks(ctx, tx, await releasedTransactionsOf(tx, payout.id), 'payout_reversed', now);
  const reversed = await finishPayout(
    tx,
    payout.id,
    'paid',
    'reversed',
    { failureReason: REVERSED_REASON },
    now,
  );
  await payoutEvent(tx, 'payout.failed', reversed, now);
  return reversed;
}
