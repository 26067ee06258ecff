import type { KeyKind } from '../domain/api-keys.ts';
import type { Queryable } from './db.ts';
import type { VerificationStatus } from './merchants.ts';

export interface ApiKeyRow {
  id: string;
  kind: KeyKind;
  merchant_id: string | null;
  key_hash: string;
  key_hint: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  replaced_by: string | null;
  created_at: Date;
}

/** A key with what authentication needs to know about its merchant, read in one query. */
export interface KeyWithMerchant extends ApiKeyRow {
  merchant_default_currency: string | null;
  merchant_verification_status: VerificationStatus | null;
  merchant_rate_limit_per_minute: number | null;
  merchant_test_clock_offset_ms: bigint | null;
}

export async function insertApiKey(
  q: Queryable,
  k: Pick<ApiKeyRow, 'id' | 'kind' | 'merchant_id' | 'key_hash' | 'key_hint' | 'scopes' | 'created_at'>,
): Promise<void> {
  await q.query(
    `INSERT INTO api_keys (id, kind, merchant_id, key_hash, key_hint, scopes, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [k.id, k.kind, k.merchant_id, k.key_hash, k.key_hint, k.scopes, k.created_at],
  );
}

export async function findKeyByHash(q: Queryable, keyHash: string): Promise<KeyWithMerchant | undefined> {
  const { rows } = await q.query<KeyWithMerchant>(
    `SELECT k.*, m.default_currency AS merchant_default_currency,
            m.verification_status AS merchant_verification_status,
            m.rate_limit_per_minute AS merchant_rate_limit_per_minute,
            m.test_clock_offset_ms AS merchant_test_clock_offset_ms
       FROM api_keys k LEFT JOIN merchants m ON m.id = k.merchant_id
      WHERE k.key_hash = $1`,
    [keyHash],
  );
  return rows[0];
}

export async function findKey(q: Queryable, id: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await q.query<ApiKeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
  return rows[0];
}

/**
 * Gives a live key an expiry and names its successor. Guarded: only a key that is neither
 * revoked nor already rotated can be rotated, so two racing rotations cannot both succeed.
 */
export async function markRotated(
  q: Queryable,
  id: string,
  expiresAt: Date,
  replacedBy: string,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE api_keys SET expires_at = $2, replaced_by = $3
      WHERE id = $1 AND revoked_at IS NULL AND replaced_by IS NULL`,
    [id, expiresAt, replacedBy],
  );
  return rowCount > 0;
}

export async function markRevoked(q: Queryable, id: string, at: Date): Promise<boolean> {
  const { rowCount } = await q.query(
    'UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL',
    [id, at],
  );
  return rowCount > 0;
}
