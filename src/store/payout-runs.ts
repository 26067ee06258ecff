import { newId } from '../domain/ids.ts';
import type { Queryable } from './db.ts';

/** A merchant's environment whose approved funds are waiting for a payout run. */
export interface PayoutRunOwner {
  merchantId: string;
  livemode: boolean;
  /** On the merchant's clock: when the funds were approved. */
  now: Date;
}

/** The subject of a merchant's payout-run job: one run per merchant and environment at a time. */
export function payoutRunSubject(merchantId: string, livemode: boolean): string {
  return `${merchantId}:${livemode ? 'live' : 'test'}`;
}

/**
 * Schedules each owner's payout run: at once for the `instant` schedule, at the next midnight
 * UTC for `daily` (the default). An earlier run already scheduled is kept (LEAST), so a run is
 * never pushed back by more approvals.
 */
export async function schedulePayoutRuns(q: Queryable, owners: readonly PayoutRunOwner[]): Promise<void> {
  if (owners.length === 0) return;
  await q.query(
    `INSERT INTO scheduled_jobs (id, kind, merchant_id, livemode, subject_id, run_at, created_at)
     SELECT u.id, 'payout_run', u.merchant_id, u.livemode, u.subject,
            CASE WHEN coalesce(s.schedule, 'daily') = 'instant' THEN u.now
                 ELSE (date_trunc('day', u.now AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC' END,
            u.now
       FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::timestamptz[])
            AS u(id, merchant_id, livemode, subject, now)
       LEFT JOIN payout_settings s ON s.merchant_id = u.merchant_id AND s.livemode = u.livemode
     ON CONFLICT ON CONSTRAINT scheduled_jobs_one_per_subject
     DO UPDATE SET run_at = LEAST(scheduled_jobs.run_at, EXCLUDED.run_at)`,
    [
      owners.map((o) => newId('job', o.now.getTime())),
      owners.map((o) => o.merchantId),
      owners.map((o) => o.livemode),
      owners.map((o) => payoutRunSubject(o.merchantId, o.livemode)),
      owners.map((o) => o.now),
    ],
  );
}

/** The next midnight UTC after `now` (the daily schedule's run time). */
export function nextMidnightUtc(now: Date): Date {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(day + 24 * 60 * 60 * 1000);
}

/**
 * Schedules an owner's payout run at a given time (a retry after a failed payout, a run at once
 * after new settings). An earlier run already scheduled is kept (LEAST).
 */
export async function schedulePayoutRunAt(
  q: Queryable,
  owner: { merchantId: string; livemode: boolean },
  runAt: Date,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO scheduled_jobs (id, kind, merchant_id, livemode, subject_id, run_at, created_at)
     VALUES ($1, 'payout_run', $2, $3, $4, $5, $6)
     ON CONFLICT ON CONSTRAINT scheduled_jobs_one_per_subject
     DO UPDATE SET run_at = LEAST(scheduled_jobs.run_at, EXCLUDED.run_at)`,
    [
      newId('job', now.getTime()),
      owner.merchantId,
      owner.livemode,
      payoutRunSubject(owner.merchantId, owner.livemode),
      runAt,
      now,
    ],
  );
}
