import type { Queryable } from './db.ts';

export type VerificationStatus = 'unverified' | 'pending' | 'verified' | 'rejected';

export interface MerchantRow {
  id: string;
  name: string;
  email: string;
  default_currency: string;
  verification_status: VerificationStatus;
  rate_limit_per_minute: number | null;
  created_at: Date;
}

export async function insertMerchant(
  q: Queryable,
  m: Omit<MerchantRow, 'rate_limit_per_minute'>,
): Promise<void> {
  await q.query(
    `INSERT INTO merchants (id, name, email, default_currency, verification_status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [m.id, m.name, m.email, m.default_currency, m.verification_status, m.created_at],
  );
}

export async function findMerchant(q: Queryable, id: string): Promise<MerchantRow | undefined> {
  const { rows } = await q.query<MerchantRow>('SELECT * FROM merchants WHERE id = $1', [id]);
  return rows[0];
}

export async function countMerchants(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>('SELECT count(*) AS n FROM merchants');
  return Number(rows[0]?.n ?? 0n);
}

/** Returns false when no such merchant exists. */
export async function updateVerification(
  q: Queryable,
  id: string,
  status: VerificationStatus,
): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE merchants SET verification_status = $2 WHERE id = $1', [
    id,
    status,
  ]);
  return rowCount > 0;
}

export async function updateRateLimit(q: Queryable, id: string, perMinute: number | null): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE merchants SET rate_limit_per_minute = $2 WHERE id = $1', [
    id,
    perMinute,
  ]);
  return rowCount > 0;
}
