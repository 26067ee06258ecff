import type { Queryable } from './db.ts';
import type { Owner } from './transactions.ts';

/** The failing state of a merchant's callback URLs, per origin (scheme, host and port). */
export interface CallbackTargetRow {
  merchant_id: string;
  livemode: boolean;
  origin: string;
  failing: boolean;
  failing_since: Date | null;
  last_alert_at: Date | null;
  last_failed_url: string | null;
  last_failed_event_id: string | null;
  updated_at: Date;
}

/** Locks (creating it if needed) the row of one callback origin. */
export async function lockCallbackTarget(
  q: Queryable,
  owner: Owner,
  origin: string,
  now: Date,
): Promise<CallbackTargetRow> {
  await q.query(
    `INSERT INTO webhook_callback_targets (merchant_id, livemode, origin, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (merchant_id, livemode, origin) DO NOTHING`,
    [owner.merchantId, owner.livemode, origin, now],
  );
  const { rows } = await q.query<CallbackTargetRow>(
    `SELECT * FROM webhook_callback_targets WHERE merchant_id = $1 AND livemode = $2 AND origin = $3
      FOR UPDATE`,
    [owner.merchantId, owner.livemode, origin],
  );
  return rows[0] as CallbackTargetRow;
}

export async function markCallbackTargetFailing(
  q: Queryable,
  owner: Owner,
  origin: string,
  failure: { url: string; eventId: string; at: Date; alerted: boolean },
): Promise<void> {
  await q.query(
    `UPDATE webhook_callback_targets
        SET failing = true, failing_since = coalesce(failing_since, $4), last_failed_url = $5,
            last_failed_event_id = $6, last_alert_at = CASE WHEN $7 THEN $4 ELSE last_alert_at END, updated_at = $4
      WHERE merchant_id = $1 AND livemode = $2 AND origin = $3`,
    [owner.merchantId, owner.livemode, origin, failure.at, failure.url, failure.eventId, failure.alerted],
  );
}

/** A success clears the failing flag of the origins it reached. */
export async function clearFailingCallbackTargets(
  q: Queryable,
  targets: readonly { merchant_id: string; livemode: boolean; origin: string }[],
  now: Date,
): Promise<void> {
  if (targets.length === 0) return;
  await q.query(
    `UPDATE webhook_callback_targets c SET failing = false, failing_since = NULL, updated_at = $4
       FROM unnest($1::text[], $2::boolean[], $3::text[]) AS t(merchant_id, livemode, origin)
      WHERE c.merchant_id = t.merchant_id AND c.livemode = t.livemode AND c.origin = t.origin AND c.failing`,
    [targets.map((t) => t.merchant_id), targets.map((t) => t.livemode), targets.map((t) => t.origin), now],
  );
}

export async function listCallbackTargets(q: Queryable, owner: Owner): Promise<CallbackTargetRow[]> {
  const { rows } = await q.query<CallbackTargetRow>(
    `SELECT * FROM webhook_callback_targets WHERE merchant_id = $1 AND livemode = $2
      ORDER BY failing DESC, updated_at DESC, origin LIMIT 100`,
    [owner.merchantId, owner.livemode],
  );
  return rows;
}
