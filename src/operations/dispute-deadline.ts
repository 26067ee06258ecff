import type { Queryable } from '../store/db.ts';
import { findDispute, lockDispute, setDisputeStatus } from '../store/disputes.ts';
import { insertEvents } from '../store/events.ts';
import type { ClaimedJob } from '../store/jobs.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import { applyMoves } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { loadDisputeView } from './dispute-view.ts';
import { objectEvent, refsOf } from './event-payloads.ts';

/**
 * The dispute_deadline job, at evidence_due_by: the parties' evidence window has ended, so the
 * case goes under review. The transaction moves disputed → under_review (review_dispute) and the
 * dispute open → under_review, with dispute.updated, in the job's database transaction. A dispute
 * already past open (the operator decided it first) is left alone.
 */
export async function disputeDeadlineJob(
  ctx: ServiceContext,
  tx: Queryable,
  job: ClaimedJob,
  now: Date,
): Promise<void> {
  const found = await findDispute(tx, job.subject_id);
  if (!found) return;
  // Transaction first, then the dispute: the lock order every path uses.
  const [row] = await lockTransactions(tx, [found.transaction_id]);
  const dispute = await lockDispute(tx, found.id);
  if (!row || !dispute || dispute.status !== 'open') return;
  let after = row;
  if (row.status === 'disputed') {
    const [applied] = await applyMoves(ctx, tx, [{ row, action: 'review_dispute', now }], 'throw');
    if (applied) after = applied.after;
  }
  await setDisputeStatus(tx, dispute.id, 'under_review', now);
  const view = await loadDisputeView(ctx, dispute.id, tx);
  if (!view) return;
  await insertEvents(tx, [objectEvent('dispute.updated', refsOf(after), view, now)]);
}
