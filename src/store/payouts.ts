import type { PayoutDestination, PayoutMethod } from '../rails/payout.ts';
import type { Queryable } from './db.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';
import type { Owner, TransactionRow } from './transactions.ts';

export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed' | 'reversed';

export interface PayoutRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  status: PayoutStatus;
  method: PayoutMethod;
  /** Where the rail sends it, in full; never shown by the API. */
  rail_destination: PayoutDestination;
  /** The masked form (last four only). */
  destination: string;
  amount_minor: bigint;
  currency: string;
  line_count: number;
  rail_reference: string | null;
  failure_reason: string | null;
  created_at: Date;
  paid_at: Date | null;
  updated_at: Date;
}

/** One transaction's part of a payout. */
export interface PayoutLineRow {
  payout_id: string;
  transaction_id: string;
  amount_minor: bigint;
}

/** A line as the API shows it, with its transaction's references. */
export interface PayoutLineDetail extends PayoutLineRow {
  merchant_reference: string | null;
  merchant_order_id: string | null;
}

/** Approved funds a payout run took: the transaction and the part not yet in a payout. */
export interface BatchedFunds {
  id: string;
  currency: string;
  line_minor: bigint;
}

/**
 * Takes every approved amount of an environment not yet in a payout, in one statement: the
 * transactions are locked with SKIP LOCKED (a transaction another worker or request holds is
 * left for the next run, never waited for, so a run cannot deadlock with releases that schedule
 * runs) and their whole approved amount is marked batched. The transaction states do not change.
 */
export async function batchUnbatchedFunds(q: Queryable, owner: Owner): Promise<BatchedFunds[]> {
  const { rows } = await q.query<BatchedFunds>(
    `WITH picked AS (
       SELECT id, amount_released_minor - amount_batched_minor AS line_minor
         FROM transactions
        WHERE merchant_id = $1 AND livemode = $2 AND amount_released_minor > amount_batched_minor
        ORDER BY id
        FOR UPDATE SKIP LOCKED
     )
     UPDATE transactions t SET amount_batched_minor = t.amount_released_minor
       FROM picked
      WHERE t.id = picked.id
     RETURNING t.id, t.currency, picked.line_minor`,
    [owner.merchantId, owner.livemode],
  );
  return rows;
}

/** Whether approved funds of the environment still wait for a payout (committed state, no locks). */
export async function unbatchedFundsWait(q: Queryable, owner: Owner): Promise<boolean> {
  const { rows } = await q.query<{ waiting: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM transactions
        WHERE merchant_id = $1 AND livemode = $2 AND amount_released_minor > amount_batched_minor
     ) AS waiting`,
    [owner.merchantId, owner.livemode],
  );
  return rows[0]?.waiting === true;
}

export async function insertPayouts(q: Queryable, payouts: readonly PayoutRow[]): Promise<void> {
  if (payouts.length === 0) return;
  await q.query(
    `INSERT INTO payouts (id, merchant_id, livemode, status, method, rail_destination, destination, amount_minor,
        currency, line_count, rail_reference, failure_reason, created_at, paid_at, updated_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::jsonb[], $7::text[],
        $8::bigint[], $9::text[], $10::int[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[],
        $15::timestamptz[])`,
    [
      payouts.map((p) => p.id),
      payouts.map((p) => p.merchant_id),
      payouts.map((p) => p.livemode),
      payouts.map((p) => p.status),
      payouts.map((p) => p.method),
      payouts.map((p) => JSON.stringify(p.rail_destination)),
      payouts.map((p) => p.destination),
      payouts.map((p) => p.amount_minor),
      payouts.map((p) => p.currency),
      payouts.map((p) => p.line_count),
      payouts.map((p) => p.rail_reference),
      payouts.map((p) => p.failure_reason),
      payouts.map((p) => p.created_at),
      payouts.map((p) => p.paid_at),
      payouts.map((p) => p.updated_at),
    ],
  );
}

/** All lines of a run in one statement (100,000 lines are three arrays). */
export async function insertPayoutLines(q: Queryable, lines: readonly PayoutLineRow[]): Promise<void> {
  if (lines.length === 0) return;
  await q.query(
    `INSERT INTO payout_lines (payout_id, transaction_id, amount_minor)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])`,
    [lines.map((l) => l.payout_id), lines.map((l) => l.transaction_id), lines.map((l) => l.amount_minor)],
  );
}

/** Scoped by owner: another merchant's or environment's payout is simply not found. */
export async function findPayout(q: Queryable, owner: Owner, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await q.query<PayoutRow>(
    'SELECT * FROM payouts WHERE id = $1 AND merchant_id = $2 AND livemode = $3',
    [id, owner.merchantId, owner.livemode],
  );
  return rows[0];
}

export async function findPayoutById(q: Queryable, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [id]);
  return rows[0];
}

/** Locks a payout, after its transactions (lockPayoutTransactions): one lock order everywhere. */
export async function lockPayout(q: Queryable, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 FOR UPDATE', [id]);
  return rows[0];
}

/**
 * Locks every transaction of a payout in id order (the order lockTransactions uses, so this
 * cannot deadlock with a batch of moves), reading only their ids: a payout may have 100,000.
 */
export async function lockPayoutTransactions(q: Queryable, payoutId: string): Promise<number> {
  const { rowCount } = await q.query(
    `SELECT t.id FROM transactions t JOIN payout_lines l ON l.transaction_id = t.id
      WHERE l.payout_id = $1 ORDER BY t.id FOR UPDATE OF t`,
    [payoutId],
  );
  return rowCount;
}

export async function payoutLines(q: Queryable, payoutId: string): Promise<PayoutLineRow[]> {
  const { rows } = await q.query<PayoutLineRow>(
    'SELECT payout_id, transaction_id, amount_minor FROM payout_lines WHERE payout_id = $1 ORDER BY transaction_id',
    [payoutId],
  );
  return rows;
}

/** The rail took the payout: in transit, with the rail's reference. */
export async function markPayoutInTransit(
  q: Queryable,
  id: string,
  railReference: string,
  at: Date,
): Promise<void> {
  await q.query(
    `UPDATE payouts SET status = 'in_transit', rail_reference = $2, updated_at = $3
      WHERE id = $1 AND status = 'pending'`,
    [id, railReference, at],
  );
}

/** Moves a payout from one status to the next; throws if it was not in the expected one. */
export async function finishPayout(
  q: Queryable,
  id: string,
  from: PayoutStatus,
  to: 'paid' | 'failed' | 'reversed',
  change: { failureReason?: string; paidAt?: Date },
  at: Date,
): Promise<PayoutRow> {
  const { rows } = await q.query<PayoutRow>(
    `UPDATE payouts SET status = $3, failure_reason = coalesce($4, failure_reason),
            paid_at = coalesce($5, paid_at), updated_at = $6
      WHERE id = $1 AND status = $2
      RETURNING *`,
    [id, from, to, change.failureReason ?? null, change.paidAt ?? null, at],
  );
  const row = rows[0];
  if (!row) throw new Error(`payout ${id} is not ${from}`);
  return row;
}

/**
 * A paid payout: each line's amount counts as paid out and the transaction's released_at is now.
 * Returns the transactions that are now wholly paid out and approved for release (the ones whose
 * payout_paid move is due), after the update.
 */
export async function markLinesPaidOut(q: Queryable, payoutId: string, at: Date): Promise<TransactionRow[]> {
  const { rows } = await q.query<TransactionRow>(
    `WITH paid AS (
       UPDATE transactions t
          SET amount_paid_out_minor = t.amount_paid_out_minor + l.amount_minor, released_at = $2
         FROM payout_lines l
        WHERE l.payout_id = $1 AND t.id = l.transaction_id
       RETURNING t.*
     )
     SELECT * FROM paid
      WHERE status = 'confirmed' AND settlement_status = 'approved_for_release'
        AND amount_paid_out_minor = amount_released_minor
      ORDER BY id`,
    [payoutId, at],
  );
  return rows;
}

/** A failed payout: its lines are no longer batched, so the next run takes them again. */
export async function returnLines(q: Queryable, payoutId: string): Promise<void> {
  await q.query(
    `UPDATE transactions t SET amount_batched_minor = t.amount_batched_minor - l.amount_minor
       FROM payout_lines l
      WHERE l.payout_id = $1 AND t.id = l.transaction_id`,
    [payoutId],
  );
}

/** The payout's transactions that are released and paid (a reversal moves them to reversed). */
export async function releasedTransactionsOf(q: Queryable, payoutId: string): Promise<TransactionRow[]> {
  const { rows } = await q.query<TransactionRow>(
    `SELECT t.* FROM transactions t JOIN payout_lines l ON l.transaction_id = t.id
      WHERE l.payout_id = $1 AND t.status = 'released' AND t.settlement_status = 'released'
      ORDER BY t.id`,
    [payoutId],
  );
  return rows;
}

export interface PayoutListFilter extends PageFilter {
  status?: string;
  createdGte?: Date;
  createdLt?: Date;
}

/** Newest first; cursors are ids, which sort by creation. Fetches one extra row to tell has_more. */
export async function listPayouts(
  q: Queryable,
  owner: Owner,
  filter: PayoutListFilter,
): Promise<Page<PayoutRow>> {
  const c = conditions(['merchant_id = $1', 'livemode = $2'], [owner.merchantId, owner.livemode]);
  if (filter.status !== undefined) c.add('status = ?', filter.status);
  if (filter.createdGte !== undefined) c.add('created_at >= ?', filter.createdGte);
  if (filter.createdLt !== undefined) c.add('created_at < ?', filter.createdLt);
  const page = keysetPage(c, 'id', filter);
  const { rows } = await q.query<PayoutRow>(
    `SELECT * FROM payouts WHERE ${c.where.join(' AND ')}
      ORDER BY id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}

/**
 * The first `perPayout + 1` lines of each payout (newest transaction first, like every list; the
 * extra one tells whether more exist). The lines are cut to the limit before their transactions
 * are joined, so a payout with 100,000 lines reads 1,001 transactions, not 100,000 (even while
 * the planner has no statistics for a payout just written).
 */
export async function firstLinesOf(
  q: Queryable,
  payoutIds: readonly string[],
  perPayout: number,
): Promise<PayoutLineDetail[]> {
  if (payoutIds.length === 0) return [];
  const { rows } = await q.query<PayoutLineDetail>(
    `SELECT p.id AS payout_id, l.transaction_id, l.amount_minor, t.merchant_reference, t.merchant_order_id
       FROM unnest($1::text[]) AS p(id)
       CROSS JOIN LATERAL (
         SELECT pl.transaction_id, pl.amount_minor FROM payout_lines pl
          WHERE pl.payout_id = p.id
          ORDER BY pl.transaction_id DESC
          LIMIT $2
       ) l
       JOIN transactions t ON t.id = l.transaction_id
      ORDER BY p.id, l.transaction_id DESC`,
    [payoutIds, perPayout + 1],
  );
  return rows;
}

/** One page of a payout's lines, newest transaction first; cursors are transaction ids. */
export async function listPayoutLines(
  q: Queryable,
  payoutId: string,
  filter: PageFilter,
): Promise<Page<PayoutLineDetail>> {
  const c = conditions(['pl.payout_id = $1'], [payoutId]);
  const page = keysetPage(c, 'pl.transaction_id', filter);
  const { rows } = await q.query<PayoutLineDetail>(
    `SELECT l.payout_id, l.transaction_id, l.amount_minor, t.merchant_reference, t.merchant_order_id
       FROM (SELECT pl.payout_id, pl.transaction_id, pl.amount_minor FROM payout_lines pl
              WHERE ${c.where.join(' AND ')}
              ORDER BY pl.transaction_id ${page.order}
              LIMIT ${page.limit}) l
       JOIN transactions t ON t.id = l.transaction_id
      ORDER BY l.transaction_id ${page.order}`,
    c.params,
  );
  return page.page(rows);
}

/** The status of the environment's latest payout (undefined when it has none). */
export async function latestPayoutStatus(q: Queryable, owner: Owner): Promise<PayoutStatus | undefined> {
  const { rows } = await q.query<{ status: PayoutStatus }>(
    'SELECT status FROM payouts WHERE merchant_id = $1 AND livemode = $2 ORDER BY id DESC LIMIT 1',
    [owner.merchantId, owner.livemode],
  );
  return rows[0]?.status;
}
