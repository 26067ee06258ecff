import type { Queryable } from './db.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';

export type RefundStatus = 'pending' | 'succeeded' | 'failed';
export type RefundOrigin = 'api' | 'cancel' | 'dispute';

export interface RefundRow {
  id: string;
  transaction_id: string;
  merchant_id: string;
  livemode: boolean;
  status: RefundStatus;
  amount_minor: bigint;
  currency: string;
  from_hold_minor: bigint;
  from_balance_minor: bigint;
  reason: string | null;
  origin: RefundOrigin;
  dispute_id: string | null;
  restore_status: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertRefund(q: Queryable, r: RefundRow): Promise<void> {
  await q.query(
    `INSERT INTO refunds (id, transaction_id, merchant_id, livemode, status, amount_minor, currency,
        from_hold_minor, from_balance_minor, reason, origin, dispute_id, restore_status, failure_reason,
        created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    [
      r.id,
      r.transaction_id,
      r.merchant_id,
      r.livemode,
      r.status,
      r.amount_minor,
      r.currency,
      r.from_hold_minor,
      r.from_balance_minor,
      r.reason,
      r.origin,
      r.dispute_id,
      r.restore_status,
      r.failure_reason,
      r.created_at,
      r.updated_at,
    ],
  );
}

export async function findRefund(q: Queryable, id: string): Promise<RefundRow | undefined> {
  const { rows } = await q.query<RefundRow>('SELECT * FROM refunds WHERE id = $1', [id]);
  return rows[0];
}

/** Locks a refund for its settlement (after its transaction: one lock order everywhere). */
export async function lockRefund(q: Queryable, id: string): Promise<RefundRow | undefined> {
  const { rows } = await q.query<RefundRow>('SELECT * FROM refunds WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

export async function finishRefund(
  q: Queryable,
  id: string,
  status: 'succeeded' | 'failed',
  failureReason: string | null,
  at: Date,
): Promise<RefundRow> {
  const { rows } = await q.query<RefundRow>(
    `UPDATE refunds SET status = $2, failure_reason = $3, updated_at = $4 WHERE id = $1 AND status = 'pending'
     RETURNING *`,
    [id, status, failureReason, at],
  );
  const row = rows[0];
  if (!row) throw new Error(`refund ${id} is not pending`);
  return row;
}

/** Refunds of a transaction still waiting for the rail, other than `exceptId`. */
export async function otherPendingRefunds(
  q: Queryable,
  transactionId: string,
  exceptId: string,
): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM refunds WHERE transaction_id = $1 AND status = 'pending' AND id <> $2`,
    [transactionId, exceptId],
  );
  return rows[0]?.n ?? 0;
}

/** A refund with its transaction's references, as the API shows it. */
export interface RefundWithRefs extends RefundRow {
  merchant_reference: string | null;
  merchant_order_id: string | null;
}

interface Owner {
  merchantId: string;
  livemode: boolean;
}

const WITH_REFS = `SELECT r.*, t.merchant_reference, t.merchant_order_id
  FROM refunds r JOIN transactions t ON t.id = r.transaction_id`;

/** A refund of this merchant and environment (another's is not found). */
export async function findOwnedRefund(
  q: Queryable,
  owner: Owner,
  id: string,
): Promise<RefundWithRefs | undefined> {
  const { rows } = await q.query<RefundWithRefs>(
    `${WITH_REFS} WHERE r.id = $1 AND r.merchant_id = $2 AND r.livemode = $3`,
    [id, owner.merchantId, owner.livemode],
  );
  return rows[0];
}

export interface RefundListFilter extends PageFilter {
  transactionId?: string;
  status?: RefundStatus;
}

/** A page of refunds, newest first (ids are time-sortable), with id cursors either way. */
export async function listRefunds(
  q: Queryable,
  owner: Owner,
  filter: RefundListFilter,
): Promise<Page<RefundWithRefs>> {
  const c = conditions(['r.merchant_id = $1', 'r.livemode = $2'], [owner.merchantId, owner.livemode]);
  if (filter.transactionId !== undefined) c.add('r.transaction_id = ?', filter.transactionId);
  if (filter.status !== undefined) c.add('r.status = ?', filter.status);
  const page = keysetPage(c, 'r.id', filter);
  const { rows } = await q.query<RefundWithRefs>(
    `${WITH_REFS} WHERE ${c.where.join(' AND ')}
      ORDER BY r.id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}

/** How many days after release the merchant agreement allows refunds from the merchant's balance. */
export async function refundsAfterReleaseDays(q: Queryable, merchantId: string): Promise<number> {
  const { rows } = await q.query<{ days: number }>(
    'SELECT refunds_after_release_days AS days FROM merchants WHERE id = $1',
    [merchantId],
  );
  const days = rows[0]?.days;
  if (days === undefined) throw new Error(`merchant ${merchantId} not found`);
  return days;
}

/**
 * The status to restore when a refund fails on a transaction another refund moved to refunded:
 * that refund's restore_status (the latest one that did not fail).
 */
export async function restoreStatusOfMovingRefund(
  q: Queryable,
  transactionId: string,
  exceptId: string,
): Promise<string | null> {
  const { rows } = await q.query<{ restore_status: string }>(
    `SELECT restore_status FROM refunds
      WHERE transaction_id = $1 AND id <> $2 AND restore_status IS NOT NULL AND status <> 'failed'
      ORDER BY id DESC LIMIT 1`,
    [transactionId, exceptId],
  );
  return rows[0]?.restore_status ?? null;
}
