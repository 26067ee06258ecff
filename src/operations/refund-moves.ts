import { newId } from '../domain/ids.ts';
import { MOVEMENTS } from '../domain/ledger.ts';
import { heldMinor, type MoveOptions } from '../domain/plan-move.ts';
import { simulatedRefundOutcome } from '../rails/simulated-refunds.ts';
import type { Queryable } from '../store/db.ts';
import { insertEvents } from '../store/events.ts';
import { type ClaimedJob, type JobKind, jobAbout, type NewJob, newJob, scheduleJobs } from '../store/jobs.ts';
import { insertLedgerRows } from '../store/ledger.ts';
import {
  findRefund,
  finishRefund,
  insertRefund,
  lockRefund,
  otherPendingRefunds,
  type RefundOrigin,
  type RefundRow,
  restoreStatusOfMovingRefund,
} from '../store/refunds.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { applyMoves, journalRows } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { objectEvent, refsOf } from './event-payloads.ts';
import { refundView } from './refund-view.ts';

export interface RefundStart {
  /** The move that sends money back: refund (POST /v1/refunds), cancel, resolve_buyer or resolve_split. */
  action: 'refund' | 'cancel' | 'resolve_buyer' | 'resolve_split';
  options?: MoveOptions;
  origin: RefundOrigin;
  reason: string | null;
  disputeId?: string | null;
}

/**
 * Starts a refund of a transaction locked in this database transaction: the state machine's move
 * (ledger rows, events and jobs in the same transaction), the refund's row, and its settlement on
 * the rail as a job. Returns the transaction after the move and the refund (null when the move
 * refunded nothing, e.g. a cancel with nothing held).
 */
export async function startRefund(
  ctx: ServiceContext,
  tx: Queryable,
  row: TransactionRow,
  start: RefundStart,
  now: Date,
): Promise<{ transaction: TransactionRow; refund: RefundRow | null }> {
  const [applied] = await applyMoves(
    ctx,
    tx,
    [{ row, action: start.action, now, options: start.options }],
    'throw',
  );
  if (!applied) throw new Error('a thrown move cannot be skipped');
  const parts = applied.plan.refund;
  if (!parts || parts.fromHoldMinor + parts.fromBalanceMinor === 0n) {
    return { transaction: applied.after, refund: null };
  }
  const refund: RefundRow = {
    id: newId('refund', now.getTime()),
    transaction_id: row.id,
    merchant_id: row.merchant_id,
    livemode: row.livemode,
    status: 'pending',
    amount_minor: parts.fromHoldMinor + parts.fromBalanceMinor,
    currency: row.currency,
    from_hold_minor: parts.fromHoldMinor,
    from_balance_minor: parts.fromBalanceMinor,
    reason: start.reason,
    origin: start.origin,
    dispute_id: start.disputeId ?? null,
    // A refund that moved the transaction to refunded puts it back if the rail cannot pay it.
    restore_status: applied.after.status === 'refunded' && row.status !== 'refunded' ? row.status : null,
    failure_reason: null,
    created_at: now,
    updated_at: now,
  };
  await insertRefund(tx, refund);
  await scheduleJobs(tx, [
    newJob(
      {
        kind: 'settle_refund',
        merchantId: row.merchant_id,
        livemode: row.livemode,
        subjectId: refund.id,
        runAt: now,
      },
      now,
    ),
  ]);
  return { transaction: applied.after, refund };
}

/**
 * The settle_refund job: the rail's answer for one refund. Paid: the refund clears to the rail,
 * the refund succeeds and, once no other refund of it is pending, a refunded transaction is
 * settled. Not paid: its money goes back where it came from and the transaction to where the
 * refund found it. Either way a refund.* event, all in this database transaction.
 */
export async function settleRefundJob(
  ctx: ServiceContext,
  tx: Queryable,
  job: ClaimedJob,
  now: Date,
): Promise<void> {
  const found = await findRefund(tx, job.subject_id);
  if (!found) return;
  // Transaction first, then the refund: the lock order every path uses.
  const [row] = await lockTransactions(tx, [found.transaction_id]);
  const pending = await lockRefund(tx, found.id);
  if (!row || !pending || pending.status !== 'pending') return;
  if (row.livemode) {
    // No live refund rail is wired in yet: the refund waits (the job is retried) rather than
    // being marked paid without money moving.
    throw new Error('No live refund rail is configured; the refund stays pending.');
  }
  const outcome = simulatedRefundOutcome(row.payment_method);
  if (outcome.outcome === 'succeeded') {
    await insertLedgerRows(tx, journalRows(row, MOVEMENTS.refundPaid(pending.amount_minor), now));
    const refund = await finishRefund(tx, pending.id, 'succeeded', null, now);
    if ((await otherPendingRefunds(tx, row.id, refund.id)) === 0) {
      if (row.settlement_status === 'refund_pending') {
        await applyMoves(ctx, tx, [{ row, action: 'refund_settled', now }], 'throw');
      } else if (row.status === 'delivered' && heldMinor(row) === 0n && row.amount_released_minor > 0n) {
        await closeReleasedRest(ctx, tx, row, now);
      }
    }
    await insertEvents(tx, [objectEvent('refund.succeeded', refsOf(row), refundView(refund, row), now)]);
    return;
  }
  // A refund moved the transaction to refunded: it goes back to where that refund found it. That
  // refund may be another, later one (a full refund after this partial one): its restore_status.
  let restoreStatus =
    row.settlement_status === 'refund_pending'
      ? (pending.restore_status ?? (await restoreStatusOfMovingRefund(tx, row.id, pending.id)))
      : null;
  // The transaction moved on (confirmed, or even paid out) while a refund of held money was on its
  // way: nothing would ever release that money again. A dispute's refund (a split's buyer part)
  // goes back to the operator; any other is approved for the seller below.
  const movedOn = ['confirmed', 'released'].includes(row.status) && pending.from_hold_minor > 0n;
  if (restoreStatus === null && movedOn && pending.origin === 'dispute') restoreStatus = 'under_review';
  const [restored] = await applyMoves(
    ctx,
    tx,
    [
      {
        row,
        action: 'refund_failed',
        now,
        options: {
          returned: {
            fromHoldMinor: pending.from_hold_minor,
            fromBalanceMinor: pending.from_balance_minor,
            restoreStatus,
          },
        },
      },
    ],
    'throw',
  );
  if (restored && restored.after.status !== row.status) {
    await scheduleJobs(tx, deadlineJobs(restored.after, now));
  }
  if (restored && restoreStatus === null && movedOn && heldMinor(restored.after) > 0n) {
    await applyMoves(ctx, tx, [{ row: restored.after, action: 'approve_returned', now }], 'throw');
  }
  const refund = await finishRefund(tx, pending.id, 'failed', outcome.message, now);
  await insertEvents(tx, [objectEvent('refund.failed', refsOf(row), refundView(refund, row), now)]);
}

/**
 * A partly released transaction whose held rest was refunded (and paid) holds nothing more: its
 * released part is the seller's. It moves on as a release of what is left would (confirmed, no
 * money to move) rather than wait for its deadline, and to released at once when that part was
 * already paid out (no payout is left to complete it). Only once the refund is paid: a refund
 * that fails puts its money back in escrow, where a delivered transaction can still release it.
 */
async function closeReleasedRest(ctx: ServiceContext, tx: Queryable, row: TransactionRow, now: Date) {
  const [confirmed] = await applyMoves(ctx, tx, [{ row, action: 'release', now }], 'throw');
  const after = confirmed?.after;
  if (after && after.amount_paid_out_minor === after.amount_released_minor) {
    await applyMoves(ctx, tx, [{ row: after, action: 'payout_paid', now }], 'throw');
  }
}

/**
 * The deadline a restored transaction had before the refund cancelled it: the auto-release at
 * the end of a delivered transaction's review window, or a time-based release. A deadline that
 * has passed meanwhile falls due at once, as it would have without the refund.
 */
function deadlineJobs(row: TransactionRow, now: Date): NewJob[] {
  const job = (kind: JobKind, runAt: Date): NewJob => jobAbout(row, kind, runAt, now);
  const condition = row.release_condition;
  if (
    condition.type === 'time_based' &&
    condition.release_at &&
    ['reserved', 'delivered'].includes(row.status)
  ) {
    return [job('time_release', new Date(condition.release_at))];
  }
  if (condition.type === 'buyer_confirmation' && row.status === 'delivered' && row.review_deadline) {
    return [job('auto_release', row.review_deadline)];
  }
  return [];
}
