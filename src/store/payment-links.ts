import type { Queryable } from './db.ts';

export interface PaymentLinkRow {
  id: string;
  transaction_id: string;
  merchant_id: string;
  livemode: boolean;
  token_hash: string;
  expires_at: Date;
  created_at: Date;
}

export async function insertPaymentLink(q: Queryable, link: PaymentLinkRow): Promise<void> {
  await q.query(
    `INSERT INTO payment_links (id, transaction_id, merchant_id, livemode, token_hash, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      link.id,
      link.transaction_id,
      link.merchant_id,
      link.livemode,
      link.token_hash,
      link.expires_at,
      link.created_at,
    ],
  );
}

export async function findPaymentLinkByTokenHash(
  q: Queryable,
  tokenHash: string,
): Promise<PaymentLinkRow | undefined> {
  const { rows } = await q.query<PaymentLinkRow>('SELECT * FROM payment_links WHERE token_hash = $1', [
    tokenHash,
  ]);
  return rows[0];
}

export async function findPaymentLink(q: Queryable, id: string): Promise<PaymentLinkRow | undefined> {
  const { rows } = await q.query<PaymentLinkRow>('SELECT * FROM payment_links WHERE id = $1', [id]);
  return rows[0];
}
