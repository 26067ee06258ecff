import type { Queryable } from './db.ts';
import type { NewEvent } from './events.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';
import type { PaymentLinkRow } from './payment-links.ts';

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
  /** The part of amount_refunded_minor paid from the merchant's balance (refunds after release). */
  amount_refunded_from_balance_minor: bigint;
  /** Approved funds in payouts that have not failed; of them, those paid; when the last was paid. */
  amount_batched_minor: bigint;
  amount_paid_out_minor: bigint;
  released_at: Date | null;
  callback_url: string | null;
  metadata: Record<string, string>;
  payment_link_id: string;
  buyer_token_hash: string;
  last_payment_attempt: PaymentAttemptSummary | null;
  request_fingerprint: string;
  created_at: Date;
  updated_at: Date;
}

/** The latest payment attempt as the transaction shows it (kept by store/payment-attempts.ts). */
export interface PaymentAttemptSummary {
  id: string;
  method: string;
  status: 'pending' | 'requires_action' | 'succeeded' | 'failed';
  instrument_last4: string;
  failure_code: string | null;
  failure_message: string | null;
  created_at: string;
}

export type NewTransactionRow = Omit<
  TransactionRow,
  | 'review_deadline'
  | 'payment_method'
  | 'amount_released_minor'
  | 'amount_refunded_minor'
  | 'amount_refunded_from_balance_minor'
  | 'amount_batched_minor'
  | 'amount_paid_out_minor'
  | 'released_at'
  | 'last_payment_attempt'
  | 'updated_at'
>;

/** The whole row of a new transaction: its fields and the starting values of the rest. */
export function newTransactionRow(t: NewTransactionRow): TransactionRow {
  return {
    ...t,
    review_deadline: null,
    payment_method: null,
    amount_released_minor: 0n,
    amount_refunded_minor: 0n,
    amount_refunded_from_balance_minor: 0n,
    amount_batched_minor: 0n,
    amount_paid_out_minor: 0n,
    released_at: null,
    last_payment_attempt: null,
    updated_at: t.created_at,
  };
}

/**
 * Creates a transaction, its payment link, its first outbox event and its payment-window expiry
 * job in ONE statement. PostgreSQL
 * runs a single statement atomically, so the four rows commit together without BEGIN and COMMIT
 * (two round trips fewer on the hottest write; see bench/README.md). Inside a transaction it is
 * simply part of it. When the merchant already has a transaction with this merchant_reference,
 * nothing is written and the result is undefined (the unique constraint decides, so races are safe).
 */
export async function insertTransactionWithLinkAndEvent(
  q: Queryable,
  t: TransactionRow,
  link: PaymentLinkRow,
  event: NewEvent,
  expiry: { jobId: string; runAt: Date },
): Promise<TransactionRow | undefined> {
  const { rows } = await q.query<TransactionRow>(
    `WITH txn AS (
       INSERT INTO transactions (id, merchant_id, livemode, merchant_reference, merchant_order_id, status,
          settlement_status, amount_minor, currency, title, vertical, customer, seller, release_condition,
          review_deadline, payment_method, amount_released_minor, amount_refunded_minor, callback_url,
          metadata, payment_link_id, request_fingerprint, created_at, updated_at, buyer_token_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
          $20, $21, $22, $23, $24, $39)
       ON CONFLICT ON CONSTRAINT transactions_merchant_reference DO NOTHING
       RETURNING *
     ), link AS (
       INSERT INTO payment_links (id, transaction_id, merchant_id, livemode, token_hash, expires_at, created_at)
       SELECT $25, $26, $27, $28::boolean, $29, $30::timestamptz, $31::timestamptz FROM txn
     ), event AS (
       INSERT INTO events (id, merchant_id, livemode, type, service_transaction_id, payload, created_at)
       SELECT $32, $33, $34::boolean, $35, $36, $37::jsonb, $38::timestamptz FROM txn
     ), expiry AS (
       INSERT INTO scheduled_jobs (id, kind, merchant_id, livemode, subject_id, run_at, created_at)
       SELECT $40, 'expire_payment', $2, $3::boolean, $1, $41::timestamptz, $23::timestamptz FROM txn
     )
     SELECT * FROM txn`,
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
      t.review_deadline,
      t.payment_method === null ? null : JSON.stringify(t.payment_method),
      t.amount_released_minor,
      t.amount_refunded_minor,
      t.callback_url,
      JSON.stringify(t.metadata),
      t.payment_link_id,
      t.request_fingerprint,
      t.created_at,
      t.updated_at,
      link.id,
      link.transaction_id,
      link.merchant_id,
      link.livemode,
      link.token_hash,
      link.expires_at,
      link.created_at,
      event.id,
      event.merchant_id,
      event.livemode,
      event.type,
      event.service_transaction_id,
      JSON.stringify(event.payload),
      event.created_at,
      t.buyer_token_hash,
      expiry.jobId,
      expiry.runAt,
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

export interface TransactionListFilter extends PageFilter {
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
): Promise<Page<TransactionRow>> {
  const c = conditions(['merchant_id = $1', 'livemode = $2'], [owner.merchantId, owner.livemode]);
  if (filter.status !== undefined) c.add('status = ?', filter.status);
  if (filter.merchantReference !== undefined) c.add('merchant_reference = ?', filter.merchantReference);
  if (filter.merchantOrderId !== undefined) c.add('merchant_order_id = ?', filter.merchantOrderId);
  if (filter.createdGte !== undefined) c.add('created_at >= ?', filter.createdGte);
  if (filter.createdLt !== undefined) c.add('created_at < ?', filter.createdLt);
  const page = keysetPage(c, 'id', filter);
  const { rows } = await q.query<TransactionRow>(
    `SELECT * FROM transactions WHERE ${c.where.join(' AND ')}
      ORDER BY id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}
