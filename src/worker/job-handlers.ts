import type { ServiceContext } from '../operations/context.ts';
import { disputeDeadlineJob } from '../operations/dispute-deadline.ts';
import { payoutRunJob } from '../operations/payout-run.ts';
import { payoutSettleJob } from '../operations/payout-settle.ts';
import { settleRefundJob } from '../operations/refund-moves.ts';
import type { Queryable } from '../store/db.ts';
import type { ClaimedJob, JobKind } from '../store/jobs.ts';

/** Runs one claimed job inside its database transaction, on the job's (merchant's) clock. */
export type JobHandler = (ctx: ServiceContext, tx: Queryable, job: ClaimedJob, now: Date) => Promise<void>;

/**
 * Jobs that run one per database transaction (runDueJobs' runSingle): each locks rows of its own
 * (a refund and its transaction, a dispute, a payout's transactions), which a shared batch could
 * take in an order that deadlocks with another worker.
 */
export const SINGLE_JOB_HANDLERS: Partial<Record<JobKind, JobHandler>> = {
  settle_refund: settleRefundJob,
  dispute_deadline: disputeDeadlineJob,
  payout_run: payoutRunJob,
  payout_settle: payoutSettleJob,
};
