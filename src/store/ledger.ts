import type { Queryable } from './db.ts';

export interface LedgerRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  currency: string;
  transaction_id: string | null;
  kind: string;
  debit_account: string;
  credit_account: string;
  amount_minor: bigint;
  created_at: Date;
}

/** Appends journal rows in one statement (a batch of moves posts together). */
export async function insertLedgerRows(q: Queryable, rows: readonly LedgerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `INSERT INTO ledger_entries (id, merchant_id, livemode, currency, transaction_id, kind, debit_account,
        credit_account, amount_minor, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::text[], $7::text[],
        $8::text[], $9::bigint[], $10::timestamptz[])`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.merchant_id),
      rows.map((r) => r.livemode),
      rows.map((r) => r.currency),
      rows.map((r) => r.transaction_id),
      rows.map((r) => r.kind),
      rows.map((r) => r.debit_account),
      rows.map((r) => r.credit_account),
      rows.map((r) => r.amount_minor),
      rows.map((r) => r.created_at),
    ],
  );
}

export interface AccountBalance {
  merchant_id: string;
  livemode: boolean;
  currency: string;
  account: string;
  /** Debits minus credits. */
  balance_minor: bigint;
}

/** Every account's balance, recomputed from the journal. */
export async function accountBalances(q: Queryable, merchantId?: string): Promise<AccountBalance[]> {
  const { rows } = await q.query<AccountBalance>(
    `SELECT merchant_id, livemode, currency, account, sum(amount)::bigint AS balance_minor FROM (
        SELECT merchant_id, livemode, currency, debit_account AS account, amount_minor AS amount FROM ledger_entries
        UNION ALL
        SELECT merchant_id, livemode, currency, credit_account, -amount_minor FROM ledger_entries
     ) legs
     WHERE $1::text IS NULL OR merchant_id = $1
     GROUP BY merchant_id, livemode, currency, account
     ORDER BY merchant_id, livemode, currency, account`,
    [merchantId ?? null],
  );
  return rows;
}

/** Per transaction: what its journal says was captured, approved for the seller and refunded. */
export interface TransactionMoney {
  transaction_id: string;
  captured_minor: bigint;
  approved_minor: bigint;
  refunded_minor: bigint;
}

export async function transactionMoney(
  q: Queryable,
  transactionIds?: readonly string[],
): Promise<TransactionMoney[]> {
  const { rows } = await q.query<TransactionMoney>(
    `SELECT transaction_id,
            coalesce(sum(amount_minor) FILTER (WHERE kind = 'capture'), 0)::bigint AS captured_minor,
            coalesce(sum(amount_minor) FILTER (WHERE kind = 'approve'), 0)::bigint AS approved_minor,
            coalesce(sum(amount_minor) FILTER (WHERE kind = 'refund'), 0)::bigint AS refunded_minor
       FROM ledger_entries
      WHERE transaction_id IS NOT NULL AND ($1::text[] IS NULL OR transaction_id = ANY($1))
      GROUP BY transaction_id`,
    [transactionIds ?? null],
  );
  return rows;
}
