import type { Queryable } from './db.ts';

/**
 * Webhook deliveries: one row per event and target, claimed by workers with a lease. Claims skip
 * rows other workers hold (SKIP LOCKED) and rows whose lease has not run out; a result is recorded
 * only under the token of the claim that sent it, and only once per attempt number.
 */

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface DeliveryFilter {
  merchantId?: string;
  livemode?: boolean;
}

export interface EventToFanOut {
  id: string;
  merchant_id: string;
  livemode: boolean;
  type: string;
  created_at: Date;
  callback_url: string | null;
}

/** Locks up to `limit` queued events, oldest first; rows another worker holds are skipped. */
export async function lockEventsToFanOut(
  q: Queryable,
  filter: DeliveryFilter & { limit: number },
): Promise<EventToFanOut[]> {
  const { rows } = await q.query<EventToFanOut>(
    `SELECT e.id, e.merchant_id, e.livemode, e.type, e.created_at, t.callback_url
       FROM events_to_fan_out f
       JOIN events e ON e.id = f.event_id
       LEFT JOIN transactions t ON t.id = e.service_transaction_id
      WHERE ($1::text IS NULL OR f.merchant_id = $1)
        AND ($2::boolean IS NULL OR f.livemode = $2)
      ORDER BY f.event_id
      LIMIT $3
      FOR UPDATE OF f SKIP LOCKED`,
    [filter.merchantId ?? null, filter.livemode ?? null, filter.limit],
  );
  return rows;
}

/**
 * Takes events off the fan-out queue; returns those that were still on it. (Redelivery takes a
 * new event off too, waiting for a worker fanning it out, so the two never both deliver it.)
 */
export async function markFannedOut(q: Queryable, eventIds: readonly string[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await q.query<{ event_id: string }>(
    'DELETE FROM events_to_fan_out WHERE event_id = ANY($1::text[]) RETURNING event_id',
    [eventIds],
  );
  return rows.map((r) => r.event_id);
}

export interface NewDelivery {
  id: string;
  event_id: string;
  merchant_id: string;
  livemode: boolean;
  endpoint_id: string | null;
  url: string;
  target_key: string;
  next_attempt_at: Date;
  created_at: Date;
  /** Claimed by the inserting worker at once (it sends it right after the commit). */
  claimed: boolean;
}

export interface Lease {
  token: string;
  ms: number;
}

export async function insertDeliveries(
  q: Queryable,
  rows: readonly NewDelivery[],
  lease: Lease,
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `INSERT INTO webhook_deliveries (id, event_id, merchant_id, livemode, endpoint_id, url, target_key, status,
        next_attempt_at, claimed_until, claim_token, created_at, updated_at)
     SELECT r.id, r.event_id, r.merchant_id, r.livemode, r.endpoint_id, r.url, r.target_key, 'pending',
            r.next_attempt_at,
            CASE WHEN r.claimed THEN clock_timestamp() + $11::bigint * interval '1 millisecond' END,
            CASE WHEN r.claimed THEN $12 END,
            r.created_at, r.created_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[], $7::text[],
                   $8::timestamptz[], $9::timestamptz[], $10::boolean[])
         AS r(id, event_id, merchant_id, livemode, endpoint_id, url, target_key, next_attempt_at, created_at, claimed)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.event_id),
      rows.map((r) => r.merchant_id),
      rows.map((r) => r.livemode),
      rows.map((r) => r.endpoint_id),
      rows.map((r) => r.url),
      rows.map((r) => r.target_key),
      rows.map((r) => r.next_attempt_at),
      rows.map((r) => r.created_at),
      rows.map((r) => r.claimed),
      lease.ms,
      lease.token,
    ],
  );
}

export interface ClaimOptions extends DeliveryFilter {
  limit: number;
  /** Most requests in flight per target key (this process). */
  perTarget: number;
  /** Requests this process already has in flight, per target key. */
  inFlight: ReadonlyMap<string, number>;
  lease: Lease;
}

/**
 * Claims deliveries due by now on their merchant's clock, at most `perTarget` in flight per target
 * (counting those already in flight), so one slow receiver cannot take every slot. Targets already
 * full are left out of the scan, so their backlog does not hide other targets' due deliveries.
 */
export async function claimDueDeliveries(q: Queryable, now: Date, options: ClaimOptions): Promise<string[]> {
  const keys = [...options.inFlight.keys()];
  const counts = keys.map((k) => options.inFlight.get(k) ?? 0);
  const full = keys.filter((_, i) => (counts[i] ?? 0) >= options.perTarget);
  const { rows } = await q.query<{ id: string }>(
    `WITH candidates AS (
       SELECT d.id, d.target_key, d.next_attempt_at
         FROM webhook_deliveries d JOIN merchants m ON m.id = d.merchant_id
        WHERE d.status = 'pending'
          AND d.next_attempt_at <= $1::timestamptz
                + CASE WHEN d.livemode THEN 0 ELSE m.test_clock_offset_ms END * interval '1 millisecond'
          -- The same bound with the largest test clock offset, which the index can use: an idle
          -- poll then stops at now instead of reading every retry scheduled for later.
          AND d.next_attempt_at <= $1::timestamptz
                + (SELECT greatest(0, coalesce(max(test_clock_offset_ms), 0)) FROM merchants) * interval '1 millisecond'
          AND (d.claimed_until IS NULL OR d.claimed_until < clock_timestamp())
          AND ($2::text IS NULL OR d.merchant_id = $2)
          AND ($3::boolean IS NULL OR d.livemode = $3)
          AND NOT (d.target_key = ANY($4::text[]))
        ORDER BY d.next_attempt_at
        LIMIT $5
        FOR UPDATE OF d SKIP LOCKED
     ), ranked AS (
       SELECT c.id, c.target_key, c.next_attempt_at,
              row_number() OVER (PARTITION BY c.target_key ORDER BY c.next_attempt_at, c.id) AS n
         FROM candidates c
     ), chosen AS (
       SELECT r.id FROM ranked r
         LEFT JOIN unnest($6::text[], $7::int[]) AS busy(key, n) ON busy.key = r.target_key
        WHERE r.n + coalesce(busy.n, 0) <= $8
        ORDER BY r.next_attempt_at
        LIMIT $9
     )
     UPDATE webhook_deliveries d
        SET claimed_until = clock_timestamp() + $10::bigint * interval '1 millisecond', claim_token = $11
       FROM chosen WHERE d.id = chosen.id
     RETURNING d.id`,
    [
      now,
      options.merchantId ?? null,
      options.livemode ?? null,
      full,
      Math.max(options.limit * 4, 100),
      keys,
      counts,
      options.perTarget,
      options.limit,
      options.lease.ms,
      options.lease.token,
    ],
  );
  return rows.map((r) => r.id);
}

/** Everything needed to send claimed deliveries. */
export interface SendRow {
  id: string;
  event_id: string;
  merchant_id: string;
  livemode: boolean;
  endpoint_id: string | null;
  target_key: string;
  /** Attempts made so far; this one is attempts + 1. */
  attempts: number;
  /** The endpoint's current URL, or the callback_url. */
  url: string;
  /** False when the endpoint was disabled or deleted since the event was fanned out. */
  active: boolean;
  payload: Record<string, unknown>;
  sealed_secret: string | null;
  clock_offset_ms: bigint;
}

export async function loadSendRows(q: Queryable, ids: readonly string[], token: string): Promise<SendRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<SendRow>(
    `SELECT d.id, d.event_id, d.merchant_id, d.livemode, d.endpoint_id, d.target_key, d.attempts,
            coalesce(w.url, d.url) AS url,
            (d.endpoint_id IS NULL OR (w.status = 'enabled' AND w.deleted_at IS NULL)) AS active,
            e.payload, s.sealed_secret,
            CASE WHEN d.livemode THEN 0 ELSE m.test_clock_offset_ms END AS clock_offset_ms
       FROM webhook_deliveries d
       JOIN events e ON e.id = d.event_id
       JOIN merchants m ON m.id = d.merchant_id
       LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
       LEFT JOIN webhook_secrets s ON s.merchant_id = d.merchant_id AND s.livemode = d.livemode
      WHERE d.id = ANY($1::text[]) AND d.claim_token = $2
      ORDER BY d.next_attempt_at, d.id`,
    [ids, token],
  );
  return rows;
}

/** Ends deliveries that must not be sent (their endpoint was disabled or deleted). */
export async function cancelDeliveries(q: Queryable, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, claimed_until = NULL,
        claim_token = NULL, updated_at = $2
      WHERE id = ANY($1::text[])`,
    [ids, now],
  );
}

export interface AttemptRecord {
  deliveryId: string;
  token: string;
  number: number;
  url: string;
  attemptedAt: Date;
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  excerpt: string | null;
  error: string | null;
  /** The delivery's status after this attempt, and when the next attempt is due (pending only). */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

export interface RecordedDelivery {
  id: string;
  event_id: string;
  merchant_id: string;
  livemode: boolean;
  endpoint_id: string | null;
  url: string;
  status: DeliveryStatus;
}

/**
 * Records attempts and moves their deliveries on, in one statement for the batch. An attempt is
 * recorded only under the token of the claim that sent it, and only if no other attempt with its
 * number was recorded (a worker whose lease ran out while sending loses to the one that took over).
 */
export async function recordAttempts(
  q: Queryable,
  records: readonly AttemptRecord[],
): Promise<RecordedDelivery[]> {
  if (records.length === 0) return [];
  const { rows } = await q.query<RecordedDelivery>(
    `WITH r AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::boolean[],
                            $7::int[], $8::int[], $9::text[], $10::text[], $11::text[], $12::timestamptz[])
         AS r(id, token, number, url, attempted_at, succeeded, status_code, latency_ms, excerpt, error,
              status, next_attempt_at)
     ), upd AS (
       UPDATE webhook_deliveries d
          SET attempts = r.number, status = r.status, next_attempt_at = r.next_attempt_at,
              claimed_until = NULL, claim_token = NULL, updated_at = r.attempted_at
         FROM r
        WHERE d.id = r.id AND d.claim_token = r.token AND d.attempts = r.number - 1
        RETURNING d.id, d.event_id, d.merchant_id, d.livemode, d.endpoint_id, d.url, d.status
     ), ins AS (
       INSERT INTO webhook_attempts (delivery_id, number, url, attempted_at, succeeded, status_code,
           latency_ms, response_excerpt, error)
       SELECT r.id, r.number, r.url, r.attempted_at, r.succeeded, r.status_code, r.latency_ms, r.excerpt,
              r.error
         FROM r JOIN upd ON upd.id = r.id
     )
     SELECT * FROM upd`,
    [
      records.map((r) => r.deliveryId),
      records.map((r) => r.token),
      records.map((r) => r.number),
      records.map((r) => r.url),
      records.map((r) => r.attemptedAt),
      records.map((r) => r.succeeded),
      records.map((r) => r.statusCode),
      records.map((r) => r.latencyMs),
      records.map((r) => r.excerpt),
      records.map((r) => r.error),
      records.map((r) => r.status),
      records.map((r) => r.nextAttemptAt),
    ],
  );
  return rows;
}

/** Due deliveries of the filter that another worker is sending right now (the test clock waits for them). */
export async function countClaimedDue(q: Queryable, now: Date, filter: DeliveryFilter): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(
    `SELECT count(*) AS n
       FROM webhook_deliveries d JOIN merchants m ON m.id = d.merchant_id
      WHERE d.status = 'pending'
        AND d.next_attempt_at <= $1::timestamptz
              + CASE WHEN d.livemode THEN 0 ELSE m.test_clock_offset_ms END * interval '1 millisecond'
        AND d.next_attempt_at <= $1::timestamptz
              + (SELECT greatest(0, coalesce(max(test_clock_offset_ms), 0)) FROM merchants) * interval '1 millisecond'
        AND d.claimed_until >= clock_timestamp()
        AND ($2::text IS NULL OR d.merchant_id = $2)
        AND ($3::boolean IS NULL OR d.livemode = $3)`,
    [now, filter.merchantId ?? null, filter.livemode ?? null],
  );
  return Number(rows[0]?.n ?? 0n);
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  merchant_id: string;
  livemode: boolean;
  endpoint_id: string | null;
  url: string;
  target_key: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  superseded_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function deliveriesOfEvents(q: Queryable, eventIds: readonly string[]): Promise<DeliveryRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await q.query<DeliveryRow>(
    `SELECT id, event_id, merchant_id, livemode, endpoint_id, url, target_key, status, attempts, next_attempt_at,
            superseded_by, created_at, updated_at
       FROM webhook_deliveries WHERE event_id = ANY($1::text[]) ORDER BY id`,
    [eventIds],
  );
  return rows;
}

export interface AttemptRow {
  delivery_id: string;
  number: number;
  url: string;
  attempted_at: Date;
  succeeded: boolean;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

export async function attemptsOfDeliveries(
  q: Queryable,
  deliveryIds: readonly string[],
): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await q.query<AttemptRow>(
    'SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, number',
    [deliveryIds],
  );
  return rows;
}

/** The pending delivery of an event to a target (an endpoint, or null for the callback_url). */
export async function findPendingDelivery(
  q: Queryable,
  eventId: string,
  endpointId: string | null,
): Promise<DeliveryRow | undefined> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT * FROM webhook_deliveries
      WHERE event_id = $1 AND coalesce(endpoint_id, 'callback_url') = coalesce($2, 'callback_url')
        AND status = 'pending'`,
    [eventId, endpointId],
  );
  return rows[0];
}

export async function makeDueNow(q: Queryable, id: string, now: Date): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET next_attempt_at = LEAST(next_attempt_at, $2), updated_at = $2
      WHERE id = $1 AND status = 'pending'`,
    [id, now],
  );
}

/** A redelivery replaces the earlier finished deliveries of the same event and target. */
export async function supersedeFinished(
  q: Queryable,
  eventId: string,
  endpointId: string | null,
  by: string,
): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET superseded_by = $3
      WHERE event_id = $1 AND coalesce(endpoint_id, 'callback_url') = coalesce($2, 'callback_url')
        AND status <> 'pending' AND superseded_by IS NULL AND id <> $3`,
    [eventId, endpointId, by],
  );
}

/**
 * Cancels an endpoint's pending deliveries that no worker is sending (disabled or deleted endpoint).
 * One being sent is recorded as usual; its next attempt, if any, is cancelled when it is claimed.
 */
export async function cancelPendingToEndpoint(q: Queryable, endpointId: string, now: Date): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = $2
      WHERE endpoint_id = $1 AND status = 'pending'
        AND (claimed_until IS NULL OR claimed_until < clock_timestamp())`,
    [endpointId, now],
  );
}

/** Gives back claims that were not used (a worker stopping with deliveries still queued). */
export async function releaseClaims(
  q: Queryable,
  claims: readonly { id: string; token: string }[],
): Promise<void> {
  if (claims.length === 0) return;
  await q.query(
    `UPDATE webhook_deliveries d SET claimed_until = NULL, claim_token = NULL
       FROM unnest($1::text[], $2::text[]) AS c(id, token)
      WHERE d.id = c.id AND d.claim_token = c.token`,
    [claims.map((c) => c.id), claims.map((c) => c.token)],
  );
}
