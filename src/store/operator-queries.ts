import type { Queryable } from './db.ts';
import type { VerificationStatus } from './merchants.ts';

/**
 * The operator console's reads. They cross every merchant and both environments on purpose: the
 * operator decides cases and verifies businesses for all of them. Nothing here is reachable with
 * a merchant key.
 */

export interface QueuedDispute {
  id: string;
  status: 'open' | 'under_review' | 'resolved';
  reason: string;
  livemode: boolean;
  evidence_due_by: Date;
  created_at: Date;
  transaction_id: string;
  merchant_id: string;
  merchant_name: string;
  amount_minor: bigint;
  currency: string;
  title: string;
  /** Past its deadline on its merchant's clock (the test clock in test mode). */
  overdue: boolean;
  /** Decided for the buyer, but the rail refused the refund: the transaction is back under review. */
  decide_again: boolean;
}

export interface DisputeQueueFilter {
  /** Only one environment; both when absent. */
  livemode?: boolean;
  /** Continue after this dispute (keyset on the deadline, then the id). */
  after?: string;
  limit: number;
}

/**
 * Disputes waiting for the operator, soonest deadline first: the undecided ones, and those decided
 * for the buyer whose refund the rail refused (the transaction went back under review and the
 * case is decided again). One extra row tells whether more follow.
 */
export async function listDisputeQueue(
  q: Queryable,
  filter: DisputeQueueFilter,
  now: Date,
): Promise<{ rows: QueuedDispute[]; hasMore: boolean }> {
  const { rows } = await q.query<QueuedDispute>(
    `WITH queue AS (
       SELECT d.id, false AS decide_again FROM disputes d WHERE d.status IN ('open', 'under_review')
       UNION ALL
       SELECT d.id, true FROM disputes d
        WHERE d.status = 'resolved'
          AND EXISTS (SELECT 1 FROM transactions t WHERE t.id = d.transaction_id AND t.status = 'under_review')
          AND EXISTS (SELECT 1 FROM refunds r
                       WHERE r.transaction_id = d.transaction_id AND r.dispute_id = d.id AND r.status = 'failed')
     )
     SELECT d.id, d.status, d.reason, d.livemode, d.evidence_due_by, d.created_at, d.transaction_id,
            d.merchant_id, m.name AS merchant_name, t.amount_minor, t.currency, t.title, queue.decide_again,
            d.evidence_due_by <= $1::timestamptz
              + (CASE WHEN d.livemode THEN 0 ELSE m.test_clock_offset_ms END) * interval '1 millisecond'
              AS overdue
       FROM queue
       JOIN disputes d ON d.id = queue.id
       JOIN transactions t ON t.id = d.transaction_id
       JOIN merchants m ON m.id = d.merchant_id
      WHERE ($2::boolean IS NULL OR d.livemode = $2)
        AND ($3::text IS NULL
             OR (d.evidence_due_by, d.id) > (SELECT c.evidence_due_by, c.id FROM disputes c WHERE c.id = $3))
      ORDER BY d.evidence_due_by, d.id
      LIMIT $4`,
    [now, filter.livemode ?? null, filter.after ?? null, filter.limit + 1],
  );
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}

export interface QueuedMerchant {
  id: string;
  name: string;
  email: string;
  verification_status: VerificationStatus;
  created_at: Date;
}

/** Merchants waiting for business verification: those who asked (pending) first, then oldest first. */
export async function listVerificationQueue(
  q: Queryable,
  limit: number,
): Promise<{ rows: QueuedMerchant[]; total: number }> {
  const [list, count] = await Promise.all([
    q.query<QueuedMerchant>(
      `SELECT id, name, email, verification_status, created_at FROM merchants
        WHERE verification_status IN ('unverified', 'pending')
        ORDER BY verification_status = 'pending' DESC, created_at, id
        LIMIT $1`,
      [limit],
    ),
    q.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM merchants WHERE verification_status IN ('unverified', 'pending')`,
    ),
  ]);
  return { rows: list.rows, total: Number(count.rows[0]?.n ?? 0n) };
}

export interface CaseTransaction {
  id: string;
  merchant_id: string;
  merchant_name: string;
  livemode: boolean;
  status: string;
  settlement_status: string;
  amount_minor: bigint;
  currency: string;
  title: string;
  merchant_reference: string | null;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
  amount_refunded_from_balance_minor: bigint;
  amount_paid_out_minor: bigint;
  customer: { name?: string | null; email?: string | null; phone?: string | null } | null;
  seller: { name?: string | null; email?: string | null; merchant_id?: string | null } | null;
  created_at: Date;
  test_clock_offset_ms: bigint;
}

export async function findCaseTransaction(q: Queryable, id: string): Promise<CaseTransaction | undefined> {
  const { rows } = await q.query<CaseTransaction>(
    `SELECT t.id, t.merchant_id, m.name AS merchant_name, t.livemode, t.status, t.settlement_status,
            t.amount_minor, t.currency, t.title, t.merchant_reference, t.amount_released_minor,
            t.amount_refunded_minor, t.amount_refunded_from_balance_minor, t.amount_paid_out_minor, t.customer, t.seller, t.created_at, m.test_clock_offset_ms
       FROM transactions t JOIN merchants m ON m.id = t.merchant_id
      WHERE t.id = $1`,
    [id],
  );
  return rows[0];
}

export interface HistoryEntry {
  id: string;
  type: string;
  created_at: Date;
  /** transaction.status_changed: the move. */
  previous_status: string | null;
  status: string | null;
  settlement_status: string | null;
  /** Events about a dispute or refund: that object's status. */
  object_status: string | null;
}

/** A transaction's events in the order they happened (ids sort by creation). */
export async function transactionHistory(
  q: Queryable,
  transactionId: string,
  limit: number,
): Promise<HistoryEntry[]> {
  const { rows } = await q.query<HistoryEntry>(
    `SELECT id, type, created_at, payload->>'previous_status' AS previous_status,
            payload->>'status' AS status, payload->>'settlement_status' AS settlement_status,
            payload->'data'->>'status' AS object_status
       FROM events WHERE service_transaction_id = $1
      ORDER BY id
      LIMIT $2`,
    [transactionId, limit],
  );
  return rows;
}

export interface CaseLedgerRow {
  id: string;
  kind: string;
  debit_account: string;
  credit_account: string;
  amount_minor: bigint;
  currency: string;
  created_at: Date;
}

export async function transactionLedger(q: Queryable, transactionId: string): Promise<CaseLedgerRow[]> {
  const { rows } = await q.query<CaseLedgerRow>(
    `SELECT id, kind, debit_account, credit_account, amount_minor, currency, created_at
       FROM ledger_entries WHERE transaction_id = $1
      ORDER BY id`,
    [transactionId],
  );
  return rows;
}

export interface CaseRefund {
  id: string;
  dispute_id: string | null;
  status: string;
  amount_minor: bigint;
  currency: string;
  origin: string;
  failure_reason: string | null;
  created_at: Date;
}

export async function transactionRefunds(q: Queryable, transactionId: string): Promise<CaseRefund[]> {
  const { rows } = await q.query<CaseRefund>(
    `SELECT id, dispute_id, status, amount_minor, currency, origin, failure_reason, created_at
       FROM refunds WHERE transaction_id = $1
      ORDER BY id`,
    [transactionId],
  );
  return rows;
}

/** Which transaction a dispute is about, for the case page (any merchant, any environment). */
export async function disputeTransactionId(q: Queryable, disputeId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ transaction_id: string }>(
    'SELECT transaction_id FROM disputes WHERE id = $1',
    [disputeId],
  );
  return rows[0]?.transaction_id;
}
