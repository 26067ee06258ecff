import type { Queryable } from './db.ts';
import type { TransactionRow } from './transactions.ts';

/** Locks transactions for a state change, in id order so two batches cannot deadlock. */
export async function lockTransactions(q: Queryable, ids: readonly string[]): Promise<TransactionRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<TransactionRow>(
    'SELECT * FROM transactions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
    [ids],
  );
  return rows;
}

export interface StateUpdate {
  id: string;
  /** The guard: the update applies only if the row is still in this state. */
  expected_status: string;
  expected_settlement_status: string;
  status: string;
  settlement_status: string;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
  amount_refunded_from_balance_minor: bigint;
  review_deadline: Date | null;
  payment_method: Record<string, unknown> | null;
  updated_at: Date;
}

/**
 * Writes new states in one statement, each guarded by the state it was computed from, and
 * returns the rows that changed. A row missing from the result lost a race and must not be
 * reported as changed.
 */
export async function updateStates(q: Queryable, updates: readonly StateUpdate[]): Promise<TransactionRow[]> {
  if (updates.length === 0) return [];
  const { rows } = await q.query<TransactionRow>(
    `UPDATE transactions t
        SET status = u.status, settlement_status = u.settlement_status,
            amount_released_minor = u.released, amount_refunded_minor = u.refunded,
            amount_refunded_from_balance_minor = u.refunded_from_balance,
            review_deadline = u.review_deadline, payment_method = u.payment_method, updated_at = u.updated_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
                   $8::timestamptz[], $9::jsonb[], $10::timestamptz[], $11::bigint[])
            AS u(id, expected_status, expected_settlement, status, settlement_status, released, refunded,
                 review_deadline, payment_method, updated_at, refunded_from_balance)
      WHERE t.id = u.id AND t.status = u.expected_status AND t.settlement_status = u.expected_settlement
      RETURNING t.*`,
    [
      updates.map((u) => u.id),
      updates.map((u) => u.expected_status),
      updates.map((u) => u.expected_settlement_status),
      updates.map((u) => u.status),
      updates.map((u) => u.settlement_status),
      updates.map((u) => u.amount_released_minor),
      updates.map((u) => u.amount_refunded_minor),
      updates.map((u) => u.review_deadline),
      updates.map((u) => (u.payment_method === null ? null : JSON.stringify(u.payment_method))),
      updates.map((u) => u.updated_at),
      updates.map((u) => u.amount_refunded_from_balance_minor),
    ],
  );
  return rows;
}
