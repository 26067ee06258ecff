import type { Queryable } from './db.ts';

export interface TransactionRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  merchant_reference: string | null;
  merchant_order_id: string | null;
  status: string;
  settlement_status: string;
  amount_minor: bigint;
  currency: string;
  title: string;
  vertical: string;
  customer: { name: string | null; phone: string | null; email: string | null } | null;
  seller: { merchant_id: string | null; email: string | null; name: string | null } | null;
  release_condition: { type: string; review_window_days: number; release_at: string | null };
  review_deadline: Date | null;
  payment_method: ({ type: string } & Record<string, unknown>) | null;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
  callback_url: string | null;
  metadata: Record<string, string>;
  payment_link_id: string;
  request_fingerprint: string;
  created_at: Date;
  updated_at: Date;
}

export type NewTransactionRow = Omit<
  TransactionRow,
  'review_deadline' | 'payment_method' | 'amount_released_minor' | 'amount_refunded_minor' | 'updated_at'
>;

/**
 * Inserts a transaction unless the merchant already has one with its merchant_reference in this
 * environment; returns undefined in that case (the unique constraint decides, so races are safe).
 */
export async function insertTransaction(
  q: Queryable,
  t: NewTransactionRow,
): Promise<TransactionRow | undefined> {
  const { rows } = await q.query<TransactionRow>(
    `INSERT INTO transactions (id, merchant_id, livemode, merchant_reference, merchant_order_id, status,
        settlement_status, amount_minor, currency, title, vertical, customer, seller, release_condition,
        callback_url, metadata, payment_link_id, request_fingerprint, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19)
     ON CONFLICT ON CONSTRAINT transactions_merchant_reference DO NOTHING
     RETURNING *`,
    [
      t.id,
      t.merchant_id,
      t.livemode,
      t.merchant_reference,
      t.merchant_order_id,
      t.status,
      t.settlement_status,
      t.amount_minor,
      t.currency,
      t.title,
      t.vertical,
      t.customer === null ? null : JSON.stringify(t.customer),
      t.seller === null ? null : JSON.stringify(t.seller),
      JSON.stringify(t.release_condition),
      t.callback_url,
      JSON.stringify(t.metadata),
      t.payment_link_id,
      t.request_fingerprint,
      t.created_at,
    ],
  );
  return rows[0];
}

export interface Owner {
  merchantId: string;
  livemode: boolean;
}

/** Scoped by owner: another merchant's or environment's transaction is simply not found. */
export async function findTransaction(
  q: Queryable,
  owner: Owner,
  id: string,
): Promise<TransactionRow | undefined> {
  const { rows } = await q.query<TransactionRow>(
    'SELECT * FROM transactions WHERE id = $1 AND merchant_id = $2 AND livemode = $3',
    [id, owner.merchantId, owner.livemode],
  );
  return rows[0];
}

export async function findTransactionByReference(
  q: Queryable,
  owner: Owner,
  merchantReference: string,
): Promise<TransactionRow | undefined> {
  const { rows } = await q.query<TransactionRow>(
    'SELECT * FROM transactions WHERE merchant_id = $1 AND livemode = $2 AND merchant_reference = $3',
    [owner.merchantId, owner.livemode, merchantReference],
  );
  return rows[0];
}

export interface TransactionListFilter {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  status?: string;
  merchantReference?: string;
  merchantOrderId?: string;
  createdGte?: Date;
  createdLt?: Date;
}

/** Newest first; cursors are ids, which sort by creation. Fetches one extra row to tell has_more. */
export async function listTransactions(
  q: Queryable,
  owner: Owner,
  filter: TransactionListFilter,
): Promise<{ rows: TransactionRow[]; hasMore: boolean }> {
  const where = ['merchant_id = $1', 'livemode = $2'];
  const params: unknown[] = [owner.merchantId, owner.livemode];
  const add = (clause: string, value: unknown) => {
    params.push(value);
    where.push(clause.replace('?', `$${params.length}`));
  };
  if (filter.status !== undefined) add('status = ?', filter.status);
  if (filter.merchantReference !== undefined) add('merchant_reference = ?', filter.merchantReference);
  if (filter.merchantOrderId !== undefined) add('merchant_order_id = ?', filter.merchantOrderId);
  if (filter.createdGte !== undefined) add('created_at >= ?', filter.createdGte);
  if (filter.createdLt !== undefined) add('created_at < ?', filter.createdLt);
  const backwards = filter.endingBefore !== undefined && filter.startingAfter === undefined;
  if (filter.startingAfter !== undefined) add('id < ?', filter.startingAfter);
  else if (filter.endingBefore !== undefined) add('id > ?', filter.endingBefore);
  params.push(filter.limit + 1);
  const { rows } = await q.query<TransactionRow>(
    `SELECT * FROM transactions WHERE ${where.join(' AND ')}
      ORDER BY id ${backwards ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > filter.limit;
  const page = rows.slice(0, filter.limit);
  return { rows: backwards ? page.reverse() : page, hasMore };
}
