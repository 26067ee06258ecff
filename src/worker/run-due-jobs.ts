import type { Action } from '../domain/state-machine.ts';
import { applyMoves, type MoveRequest } from '../operations/apply-moves.ts';
import { buyerLinkMessage } from '../operations/buyer-link-mail.ts';
import type { ServiceContext } from '../operations/context.ts';
import { applyCollectionResult } from '../operations/payments.ts';
import { runWebhookJob, WEBHOOK_JOB_KINDS } from '../operations/webhook-jobs.ts';
import type { CollectionResult } from '../rails/collection.ts';
import type { Queryable } from '../store/db.ts';
import {
  type ClaimedJob,
  type ClaimFilter,
  claimDueJobs,
  claimJob,
  deleteJobs,
  type JobKind,
  postponeJob,
} from '../store/jobs.ts';
import { attemptInFlight, findAttempt, type PaymentAttemptRow } from '../store/payment-attempts.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { SINGLE_JOB_HANDLERS } from './job-handlers.ts';

/** Jobs that are a state-machine move of their transaction. */
const MOVE_OF: Partial<Record<JobKind, Action>> = {
  expire_payment: 'expire',
  auto_release: 'auto_release',
  time_release: 'time_release',
};

const RETRY_DELAY_MS = 60_000;

const SINGLE_KINDS = Object.keys(SINGLE_JOB_HANDLERS) as JobKind[];
const BATCHED_KINDS: JobKind[] = [
  ...(Object.keys(MOVE_OF) as JobKind[]),
  'rail_callback',
  'payment_timeout',
  'send_buyer_link',
  ...WEBHOOK_JOB_KINDS,
];

function jobNow(ctx: ServiceContext, job: ClaimedJob): Date {
  return new Date(ctx.clock.now().getTime() + Number(job.clock_offset_ms));
}

const TIMEOUT_MESSAGE: Record<PaymentAttemptRow['method'], string> = {
  mobile_money: 'The phone did not answer the payment request in time (M-Pesa 1037).',
  card: 'The 3-D Secure challenge was not completed in time.',
};

function railResult(job: ClaimedJob, attempt: PaymentAttemptRow | undefined): CollectionResult {
  if (job.kind === 'rail_callback') return job.payload as CollectionResult;
  return {
    attemptId: job.subject_id,
    outcome: 'failed',
    code: 'timeout',
    message: TIMEOUT_MESSAGE[attempt?.method ?? 'mobile_money'],
  };
}

/**
 * E-mails the buyer their page. A failed send throws, so the job is kept and retried later; a send
 * whose batch then fails may be repeated (at least once, like every delivery).
 */
async function sendBuyerLink(ctx: ServiceContext, row: TransactionRow | undefined): Promise<void> {
  const message = row && buyerLinkMessage(ctx, row);
  if (message && ctx.mailer) await ctx.mailer.send(message);
}

/**
 * Runs claimed jobs inside the claiming transaction: moves in one batch (a few statements for the
 * whole batch, the scheduler's hot path), rail results one by one. Returns the jobs to postpone.
 */
async function runJobs(ctx: ServiceContext, tx: Queryable, jobs: ClaimedJob[]): Promise<ClaimedJob[]> {
  const moveJobs = jobs.filter((j) => MOVE_OF[j.kind]);
  const railJobs = jobs.filter((j) => j.kind === 'rail_callback' || j.kind === 'payment_timeout');
  const mailJobs = jobs.filter((j) => j.kind === 'send_buyer_link');
  const webhookJobs = jobs.filter((j) => (WEBHOOK_JOB_KINDS as readonly JobKind[]).includes(j.kind));
  // One lock order for every path: transactions (all at once, in id order), then payment
  // attempts (applyCollectionResult). Taking a rail job's transaction only after the batch's
  // others could deadlock with a payment completing at that moment, or with another worker.
  const attempts = new Map<string, PaymentAttemptRow>();
  for (const job of railJobs) {
    const attempt = await findAttempt(tx, job.subject_id);
    if (attempt) attempts.set(attempt.id, attempt);
  }
  const attemptTransactions = [...attempts.values()].map((a) => a.transaction_id);
  const rows = new Map(
    (
      await lockTransactions(tx, [
        ...moveJobs.map((j) => j.subject_id),
        ...attemptTransactions,
        ...mailJobs.map((j) => j.subject_id),
      ])
    ).map((r) => [r.id, r]),
  );
  const postponed: ClaimedJob[] = [];
  const requests: MoveRequest[] = [];
  for (const job of moveJobs) {
    const row = rows.get(job.subject_id);
    const action = MOVE_OF[job.kind];
    if (!row || !action) continue;
    // A payment in flight may still succeed: expiry waits for its result.
    if (job.kind === 'expire_payment' && (await attemptInFlight(tx, row.id))) postponed.push(job);
    else requests.push({ row, action, now: jobNow(ctx, job) });
  }
  await applyMoves(ctx, tx, requests, 'skip');
  for (const job of railJobs) {
    await applyCollectionResult(ctx, tx, railResult(job, attempts.get(job.subject_id)));
  }
  for (const job of mailJobs) await sendBuyerLink(ctx, rows.get(job.subject_id));
  for (const job of webhookJobs) await runWebhookJob(ctx, tx, job, jobNow(ctx, job));
  return postponed;
}

async function finish(
  ctx: ServiceContext,
  tx: Queryable,
  jobs: ClaimedJob[],
  postponed: ClaimedJob[],
  why: string,
) {
  const later = new Set(postponed.map((j) => j.id));
  for (const job of postponed)
    await postponeJob(tx, job.id, new Date(jobNow(ctx, job).getTime() + RETRY_DELAY_MS), why);
  await deleteJobs(
    tx,
    jobs.filter((j) => !later.has(j.id)).map((j) => j.id),
  );
}

/**
 * Claims and runs one batch in one database transaction. If the batch fails unexpectedly it is
 * rolled back and its jobs run one at a time, so one bad job is postponed (with its error kept)
 * without holding back the others.
 */
async function runBatch(ctx: ServiceContext, filter: ClaimFilter): Promise<number> {
  let claimedIds: string[] = [];
  try {
    return await ctx.db.transaction(async (tx) => {
      const jobs = await claimDueJobs(tx, ctx.clock.now(), filter);
      claimedIds = jobs.map((j) => j.id);
      await finish(ctx, tx, jobs, await runJobs(ctx, tx, jobs), 'payment in flight');
      return jobs.length;
    });
  } catch (error) {
    if (claimedIds.length === 0) throw error;
    for (const id of claimedIds) {
      await ctx.db.transaction(async (tx) => {
        const job = await claimJob(tx, id);
        if (!job) return;
        await tx.query('SAVEPOINT job');
        try {
          await finish(ctx, tx, [job], await runJobs(ctx, tx, [job]), 'payment in flight');
        } catch (jobError) {
          await tx.query('ROLLBACK TO SAVEPOINT job');
          await postponeJob(
            tx,
            job.id,
            new Date(jobNow(ctx, job).getTime() + RETRY_DELAY_MS),
            String(jobError),
          );
        }
      });
    }
    return claimedIds.length;
  }
}

/** The kinds a filter asks for among `kinds` (all of them without a filter). */
function within(kinds: readonly JobKind[], filter: readonly JobKind[] | undefined): JobKind[] {
  return filter ? kinds.filter((k) => filter.includes(k)) : [...kinds];
}

/**
 * Claims and runs one job of its own kind (a refund's settlement, a dispute's deadline, a payout
 * run) in its own database transaction, as its handler locks rows of its own. A job that fails is
 * rolled back to a savepoint and postponed with its error. Returns how many ran (0 or 1).
 */
async function runSingle(ctx: ServiceContext, filter: ClaimFilter): Promise<number> {
  return ctx.db.transaction(async (tx) => {
    const [job] = await claimDueJobs(tx, ctx.clock.now(), { ...filter, limit: 1 });
    const handler = job && SINGLE_JOB_HANDLERS[job.kind];
    if (!job || !handler) return 0;
    await tx.query('SAVEPOINT job');
    try {
      await handler(ctx, tx, job, jobNow(ctx, job));
      await deleteJobs(tx, [job.id]);
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT job');
      await postponeJob(tx, job.id, new Date(jobNow(ctx, job).getTime() + RETRY_DELAY_MS), String(error));
    }
    return 1;
  });
}

/**
 * Runs every job due by now (or matching the filter) until none is left; returns how many ran.
 * Batched kinds run in batches; the others one by one. Jobs can make more due work (a payout run
 * sends payouts whose settlement is due at once), so passes repeat until one finds nothing.
 * Several workers may run this at once: SKIP LOCKED gives each its own jobs.
 */
export async function runDueJobs(
  ctx: ServiceContext,
  filter: Omit<ClaimFilter, 'limit'> = {},
  batchSize = 500,
): Promise<number> {
  const batchKinds = within(BATCHED_KINDS, filter.kinds);
  const singleKinds = within(SINGLE_KINDS, filter.kinds);
  let total = 0;
  for (;;) {
    let ran = 0;
    while (batchKinds.length > 0) {
      const n = await runBatch(ctx, { ...filter, kinds: batchKinds, limit: batchSize });
      ran += n;
      if (n < batchSize) break;
    }
    while (singleKinds.length > 0) {
      const n = await runSingle(ctx, { ...filter, kinds: singleKinds, limit: 1 });
      if (n === 0) break;
      ran += n;
    }
    total += ran;
    if (ran === 0) return total;
  }
}
