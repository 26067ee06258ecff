import type { Queryable } from './db.ts';
import type { Owner } from './transactions.ts';

export interface SealedSecretRow {
  merchant_id: string;
  livemode: boolean;
  sealed_secret: string;
  created_at: Date;
}

export async function findSealedSecret(q: Queryable, owner: Owner): Promise<SealedSecretRow | undefined> {
  const { rows } = await q.query<SealedSecretRow>(
    'SELECT * FROM webhook_secrets WHERE merchant_id = $1 AND livemode = $2',
    [owner.merchantId, owner.livemode],
  );
  return rows[0];
}

/** Keeps the first secret written for an owner: of two racing writers, both get the winner's. */
export async function insertSecretIfMissing(
  q: Queryable,
  owner: Owner,
  sealed: string,
  now: Date,
): Promise<SealedSecretRow> {
  await q.query(
    `INSERT INTO webhook_secrets (merchant_id, livemode, sealed_secret, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (merchant_id, livemode) DO NOTHING`,
    [owner.merchantId, owner.livemode, sealed, now],
  );
  const row = await findSealedSecret(q, owner);
  if (!row) throw new Error('webhook secret vanished after insert');
  return row;
}

/** Secrets for several owners at once (one per merchant and environment), missing ones inserted. */
export async function insertSecretsIfMissing(
  q: Queryable,
  rows: readonly { merchant_id: string; livemode: boolean; sealed_secret: string; created_at: Date }[],
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `INSERT INTO webhook_secrets (merchant_id, livemode, sealed_secret, created_at)
     SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::timestamptz[])
     ON CONFLICT (merchant_id, livemode) DO NOTHING`,
    [
      rows.map((r) => r.merchant_id),
      rows.map((r) => r.livemode),
      rows.map((r) => r.sealed_secret),
      rows.map((r) => r.created_at),
    ],
  );
}

export async function replaceSecret(q: Queryable, owner: Owner, sealed: string, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO webhook_secrets (merchant_id, livemode, sealed_secret, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (merchant_id, livemode) DO UPDATE SET sealed_secret = EXCLUDED.sealed_secret,
       created_at = EXCLUDED.created_at`,
    [owner.merchantId, owner.livemode, sealed, now],
  );
}
