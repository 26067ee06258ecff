import type { Queryable } from './db.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';

export type DisputeStatus = 'open' | 'under_review' | 'resolved' | 'withdrawn';
export type DisputeReason = 'not_received' | 'not_as_described' | 'damaged' | 'unauthorized' | 'other';
export type DisputeParty = 'buyer' | 'seller' | 'operator';
export type DisputeDecision = 'seller' | 'buyer' | 'split';

export interface DisputeRow {
  id: string;
  transaction_id: string;
  merchant_id: string;
  livemode: boolean;
  status: DisputeStatus;
  reason: DisputeReason;
  description: string;
  opened_by: DisputeParty;
  evidence_due_by: Date;
  decision: DisputeDecision | null;
  amount_to_seller_minor: bigint | null;
  amount_to_buyer_minor: bigint | null;
  decided_at: Date | null;
  note: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Undecided: the statuses the unique index disputes_one_active covers. */
export const UNDECIDED: readonly DisputeStatus[] = ['open', 'under_review'];

export async function insertDispute(q: Queryable, d: DisputeRow): Promise<void> {
  await q.query(
    `INSERT INTO disputes (id, transaction_id, merchant_id, livemode, status, reason, description, opened_by,
        evidence_due_by, decision, amount_to_seller_minor, amount_to_buyer_minor, decided_at, note,
        created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    [
      d.id,
      d.transaction_id,
      d.merchant_id,
      d.livemode,
      d.status,
      d.reason,
      d.description,
      d.opened_by,
      d.evidence_due_by,
      d.decision,
      d.amount_to_seller_minor,
      d.amount_to_buyer_minor,
      d.decided_at,
      d.note,
      d.created_at,
      d.updated_at,
    ],
  );
}

export async function findDispute(q: Queryable, id: string): Promise<DisputeRow | undefined> {
  const { rows } = await q.query<DisputeRow>('SELECT * FROM disputes WHERE id = $1', [id]);
  return rows[0];
}

/** Locks a dispute (after its transaction: the one lock order every path uses). */
export async function lockDispute(q: Queryable, id: string): Promise<DisputeRow | undefined> {
  const { rows } = await q.query<DisputeRow>('SELECT * FROM disputes WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

/** A transaction's disputes, newest first (the buyer page shows the latest). */
export async function disputesOfTransaction(q: Queryable, transactionId: string): Promise<DisputeRow[]> {
  const { rows } = await q.query<DisputeRow>(
    'SELECT * FROM disputes WHERE transaction_id = $1 ORDER BY id DESC',
    [transactionId],
  );
  return rows;
}

export async function setDisputeStatus(
  q: Queryable,
  id: string,
  status: DisputeStatus,
  at: Date,
): Promise<DisputeRow> {
  const { rows } = await q.query<DisputeRow>(
    'UPDATE disputes SET status = $2, updated_at = $3 WHERE id = $1 RETURNING *',
    [id, status, at],
  );
  const row = rows[0];
  if (!row) throw new Error(`dispute ${id} not found`);
  return row;
}

/** Marks a dispute's row changed (evidence was added). */
export async function touchDispute(q: Queryable, id: string, at: Date): Promise<void> {
  await q.query('UPDATE disputes SET updated_at = $2 WHERE id = $1', [id, at]);
}

export interface DisputeOutcome {
  decision: DisputeDecision;
  amountToSellerMinor: bigint;
  amountToBuyerMinor: bigint;
  note: string | null;
  decidedAt: Date;
}

/**
 * Records the operator's decision; guarded so only an undecided dispute is resolved, or with
 * `again` a resolved one (a decision whose refund the rail could not pay).
 */
export async function resolveDisputeRow(
  q: Queryable,
  id: string,
  outcome: DisputeOutcome,
  again = false,
): Promise<DisputeRow | undefined> {
  const { rows } = await q.query<DisputeRow>(
    `UPDATE disputes
        SET status = 'resolved', decision = $2, amount_to_seller_minor = $3, amount_to_buyer_minor = $4,
            note = $5, decided_at = $6, updated_at = $6
      WHERE id = $1 AND (status IN ('open', 'under_review') OR ($7 AND status = 'resolved'))
      RETURNING *`,
    [
      id,
      outcome.decision,
      outcome.amountToSellerMinor,
      outcome.amountToBuyerMinor,
      outcome.note,
      outcome.decidedAt,
      again,
    ],
  );
  return rows[0];
}

/** Whether a refund made by a dispute's outcome was refused by the rail. */
export async function hasFailedDisputeRefund(q: Queryable, disputeId: string): Promise<boolean> {
  const { rows } = await q.query(
    `SELECT 1 FROM refunds WHERE dispute_id = $1 AND status = 'failed' LIMIT 1`,
    [disputeId],
  );
  return rows.length > 0;
}

export interface DisputeListFilter extends PageFilter {
  /** Undefined for the operator's list across merchants (unless it asks for one). */
  merchantId?: string;
  livemode?: boolean;
  status?: DisputeStatus;
  transactionId?: string;
}

/** Disputes newest first, paged by id (ids sort by creation time). */
export async function listDisputes(q: Queryable, filter: DisputeListFilter): Promise<Page<DisputeRow>> {
  const c = conditions();
  if (filter.merchantId !== undefined) c.add('merchant_id = ?', filter.merchantId);
  if (filter.livemode !== undefined) c.add('livemode = ?', filter.livemode);
  if (filter.status !== undefined) c.add('status = ?', filter.status);
  if (filter.transactionId !== undefined) c.add('transaction_id = ?', filter.transactionId);
  const page = keysetPage(c, 'id', filter);
  const { rows } = await q.query<DisputeRow>(
    `SELECT * FROM disputes ${c.where.length > 0 ? `WHERE ${c.where.join(' AND ')}` : ''}
      ORDER BY id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}
