import type { Queryable } from './db.ts';
import type { NewJob } from './jobs.ts';

/**
 * Jobs the webhook side keeps in scheduled_jobs: failing-endpoint alerts and event purges. Unlike
 * scheduleJobs, an existing job of the same kind and subject is kept as it is.
 */
export async function scheduleJobsIfAbsent(q: Queryable, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await q.query(
    `INSERT INTO scheduled_jobs (id, kind, merchant_id, livemode, subject_id, run_at, payload, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::timestamptz[],
        $7::jsonb[], $8::timestamptz[])
     ON CONFLICT ON CONSTRAINT scheduled_jobs_one_per_subject DO NOTHING`,
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

/**
 * A running job that wants to run again: the claimed row is removed here and a new one (new id,
 * same kind and subject) takes its place, so the runner's delete of the claimed id leaves it.
 */
export async function replaceRunningJob(q: Queryable, runningId: string, next: NewJob): Promise<void> {
  await q.query('DELETE FROM scheduled_jobs WHERE id = $1', [runningId]);
  await scheduleJobsIfAbsent(q, [next]);
}
