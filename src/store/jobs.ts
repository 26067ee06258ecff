import { newId } from '../domain/ids.ts';
import type { Queryable } from './db.ts';

export type JobKind =
  | 'expire_payment'
  | 'auto_release'
  | 'time_release'
  | 'settle_refund'
  | 'dispute_deadline'
  | 'payout_run'
  | 'payout_settle'
  | 'payment_timeout'
  | 'rail_callback'
  | 'send_buyer_link'
  | 'webhook_alert'
  | 'purge_events';

export interface JobRow {
  id: string;
  kind: JobKind;
  merchant_id: string;
  livemode: boolean;
  subject_id: string;
  run_at: Date;
  payload: Record<string, unknown>;
  attempts: number;
}

/** A claimed job, with its merchant's test clock offset so it runs on the merchant's time. */
export interface ClaimedJob extends JobRow {
  clock_offset_ms: bigint;
}

export type NewJob = Omit<JobRow, 'attempts'> & { created_at: Date };

/** What makes a job: its kind, whose it is, what it is about, when it is due, what it carries. */
export interface JobSpec {
  kind: JobKind;
  merchantId: string;
  livemode: boolean;
  subjectId: string;
  runAt: Date;
  payload?: Record<string, unknown>;
}

/** A job to schedule, made at `now` (its id sorts by that time). */
export function newJob(spec: JobSpec, now: Date): NewJob {
  return {
    id: newId('job', now.getTime()),
    kind: spec.kind,
    merchant_id: spec.merchantId,
    livemode: spec.livemode,
    subject_id: spec.subjectId,
    run_at: spec.runAt,
    payload: spec.payload ?? {},
    created_at: now,
  };
}

/** A job about a row of its own (a transaction's deadline, say), in the row's merchant and environment. */
export function jobAbout(
  row: { id: string; merchant_id: string; livemode: boolean },
  kind: JobKind,
  runAt: Date,
  now: Date,
): NewJob {
  return newJob({ kind, merchantId: row.merchant_id, livemode: row.livemode, subjectId: row.id, runAt }, now);
}

/** Schedules jobs; a job of the same kind for the same subject is replaced (one per subject). */
export async function scheduleJobs(q: Queryable, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await q.query(
    `INSERT INTO scheduled_jobs (id, kind, merchant_id, livemode, subject_id, run_at, payload, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::timestamptz[],
        $7::jsonb[], $8::timestamptz[])
     ON CONFLICT ON CONSTRAINT scheduled_jobs_one_per_subject
     DO UPDATE SET run_at = EXCLUDED.run_at, payload = EXCLUDED.payload, attempts = 0, last_error = NULL`,
    [
      jobs.map((j) => j.id),
      jobs.map((j) => j.kind),
      jobs.map((j) => j.merchant_id),
      jobs.map((j) => j.livemode),
      jobs.map((j) => j.subject_id),
      jobs.map((j) => j.run_at),
      jobs.map((j) => JSON.stringify(j.payload)),
      jobs.map((j) => j.created_at),
    ],
  );
}

export interface ClaimFilter {
  /** Only this merchant's test-mode jobs (the test clock's advance). */
  merchantId?: string;
  livemode?: boolean;
  /** Only jobs about this subject, due or not (the test helper settles a simulated payment at once). */
  subjectId?: string;
  /** Only jobs of these kinds. */
  kinds?: readonly JobKind[];
  limit: number;
}

const CLAIMED_JOB = `SELECT j.id, j.kind, j.merchant_id, j.livemode, j.subject_id, j.run_at, j.payload, j.attempts,
            CASE WHEN j.livemode THEN 0 ELSE m.test_clock_offset_ms END AS clock_offset_ms
       FROM scheduled_jobs j JOIN merchants m ON m.id = j.merchant_id`;

/**
 * Due by the merchant's clock, and by a bound the run_at index can stop at: no merchant's clock is
 * ahead of the system time by more than the largest test clock offset (live mode has none), so
 * every due job is within it. Without the bound a poll read every future job (about 45 ms per
 * poll with 100,000 pending; see bench/README.md); with it, only the due ones.
 */
const DUE = `j.run_at <= $1::timestamptz + CASE WHEN j.livemode THEN 0 ELSE m.test_clock_offset_ms END * interval '1 millisecond'
        AND j.run_at <= $1::timestamptz
              + (SELECT greatest(0, coalesce(max(test_clock_offset_ms), 0)) FROM merchants) * interval '1 millisecond'
        AND ($2::text IS NULL OR j.merchant_id = $2)
        AND ($3::boolean IS NULL OR j.livemode = $3)`;

const CLAIM_DUE = `${CLAIMED_JOB}
      WHERE ${DUE}
        AND ($5::text[] IS NULL OR j.kind = ANY($5::text[]))
      ORDER BY j.run_at
      LIMIT $4
      FOR UPDATE OF j SKIP LOCKED`;

/** A subject's jobs, due or not. */
const CLAIM_SUBJECT = `${CLAIMED_JOB}
      WHERE j.subject_id = $1
        AND ($2::text IS NULL OR j.merchant_id = $2)
        AND ($3::boolean IS NULL OR j.livemode = $3)
        AND ($5::text[] IS NULL OR j.kind = ANY($5::text[]))
      ORDER BY j.run_at
      LIMIT $4
      FOR UPDATE OF j SKIP LOCKED`;

/**
 * Claims due jobs for this database transaction. A job is due when its run_at has passed on its
 * merchant's clock: the system time, plus the merchant's test clock offset in test mode. Rows
 * another worker holds are skipped, so workers share the table without waiting on each other.
 * With a subjectId, that subject's jobs are claimed whether due or not.
 */
export async function claimDueJobs(q: Queryable, now: Date, filter: ClaimFilter): Promise<ClaimedJob[]> {
  const rest = [filter.merchantId ?? null, filter.livemode ?? null, filter.limit, filter.kinds ?? null];
  const { rows } =
    filter.subjectId === undefined
      ? await q.query<ClaimedJob>(CLAIM_DUE, [now, ...rest])
      : await q.query<ClaimedJob>(CLAIM_SUBJECT, [filter.subjectId, ...rest]);
  return rows;
}

/**
 * How many jobs are due by now for a merchant or environment, including those another worker
 * holds at this moment (a count takes no lock): the test clock waits for those to finish.
 */
export async function countDueJobs(
  q: Queryable,
  now: Date,
  filter: Pick<ClaimFilter, 'merchantId' | 'livemode'>,
): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM scheduled_jobs j JOIN merchants m ON m.id = j.merchant_id WHERE ${DUE}`,
    [now, filter.merchantId ?? null, filter.livemode ?? null],
  );
  return Number(rows[0]?.n ?? 0n);
}

/** Claims one job by id, due or not, unless another worker holds it. */
export async function claimJob(q: Queryable, id: string): Promise<ClaimedJob | undefined> {
  const { rows } = await q.query<ClaimedJob>(
    `${CLAIMED_JOB}
      WHERE j.id = $1
      FOR UPDATE OF j SKIP LOCKED`,
    [id],
  );
  return rows[0];
}

export async function deleteJobs(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query('DELETE FROM scheduled_jobs WHERE id = ANY($1::text[])', [ids]);
}

/**
 * Removes a subject's pending jobs of the given kinds (their reason has gone). A job a worker has
 * claimed is left to it: the caller already holds the subject's lock, which the worker takes next,
 * so waiting for the job's lock would deadlock. The worker then finds under that lock that its
 * move no longer applies (or its attempt has finished), skips it and deletes the job.
 */
export async function cancelJobs(
  q: Queryable,
  subjectIds: readonly string[],
  kinds: readonly JobKind[],
): Promise<void> {
  if (subjectIds.length === 0) return;
  await q.query(
    `DELETE FROM scheduled_jobs WHERE id IN (
       SELECT id FROM scheduled_jobs WHERE subject_id = ANY($1::text[]) AND kind = ANY($2::text[])
       FOR UPDATE SKIP LOCKED)`,
    [subjectIds, kinds],
  );
}

/** A job that failed unexpectedly is retried later, with its error kept for operators. */
export async function postponeJob(q: Queryable, id: string, runAt: Date, error: string): Promise<void> {
  await q.query(
    'UPDATE scheduled_jobs SET attempts = attempts + 1, run_at = $2, last_error = $3 WHERE id = $1',
    [id, runAt, error.slice(0, 1000)],
  );
}
