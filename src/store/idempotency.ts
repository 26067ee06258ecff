import type { Queryable } from './db.ts';

export interface IdempotencyRow {
  operation: string;
  request_fingerprint: string;
  response_status: number | null;
  resource_type: string | null;
  resource_id: string | null;
}

export interface IdempotencyScope {
  merchantId: string;
  livemode: boolean;
  key: string;
}

/**
 * Claims a key for this request. Returns undefined when the claim is new; otherwise the row that
 * holds it. Under PostgreSQL a concurrent claim of the same key waits here until the first
 * transaction commits, so the loser sees the finished row and replays it.
 */
export async function claimIdempotencyKey(
  q: Queryable,
  scope: IdempotencyScope,
  operation: string,
  fingerprint: string,
  now: Date,
): Promise<IdempotencyRow | undefined> {
  const inserted = await q.query(
    `INSERT INTO idempotency_keys (merchant_id, livemode, key, operation, request_fingerprint, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [scope.merchantId, scope.livemode, scope.key, operation, fingerprint, now],
  );
  if (inserted.rowCount > 0) return undefined;
  const { rows } = await q.query<IdempotencyRow>(
    `SELECT operation, request_fingerprint, response_status, resource_type, resource_id
       FROM idempotency_keys WHERE merchant_id = $1 AND livemode = $2 AND key = $3`,
    [scope.merchantId, scope.livemode, scope.key],
  );
  const row = rows[0];
  if (!row) throw new Error('idempotency key vanished between insert and read');
  return row;
}

export async function completeIdempotencyKey(
  q: Queryable,
  scope: IdempotencyScope,
  result: { status: number; resourceType: string; resourceId: string },
): Promise<void> {
  await q.query(
    `UPDATE idempotency_keys SET response_status = $4, resource_type = $5, resource_id = $6
      WHERE merchant_id = $1 AND livemode = $2 AND key = $3`,
    [scope.merchantId, scope.livemode, scope.key, result.status, result.resourceType, result.resourceId],
  );
}

/** Idempotency records are kept at least 24 hours (resolutions 4); older ones may be purged. */
export async function purgeIdempotencyKeys(q: Queryable, olderThan: Date): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM idempotency_keys WHERE created_at < $1', [olderThan]);
  return rowCount;
}

/** Forgets a key whose request failed after it was claimed (mutations that span several transactions). */
export async function releaseIdempotencyKey(q: Queryable, scope: IdempotencyScope): Promise<void> {
  await q.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND livemode = $2 AND key = $3', [
    scope.merchantId,
    scope.livemode,
    scope.key,
  ]);
}
