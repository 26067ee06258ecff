import type { Queryable } from './db.ts';

/**
 * One currency of a merchant's environment, recomputed from the journal. Account figures are
 * balances (debits - credits); the flow figures are totals of journal kinds.
 */
export interface JournalBalanceRow {
  currency: string;
  escrow_held: bigint;
  seller_payable: bigint;
  payout_clearing: bigint;
  refund_clearing: bigint;
  merchant_balance: bigint;
  payout_paid: bigint;
  payout_reversed: bigint;
  refund_paid: bigint;
}

/** Every currency with journal rows in this merchant's environment, one row each (index: ledger_entries_owner). */
export async function journalBalances(
  q: Queryable,
  owner: { merchantId: string; livemode: boolean },
): Promise<JournalBalanceRow[]> {
  const account = (name: string) =>
    `(coalesce(sum(amount_minor) FILTER (WHERE debit_account = '${name}'), 0)
      - coalesce(sum(amount_minor) FILTER (WHERE credit_account = '${name}'), 0))::bigint AS ${name}`;
  const kind = (name: string) =>
    `coalesce(sum(amount_minor) FILTER (WHERE kind = '${name}'), 0)::bigint AS ${name}`;
  const { rows } = await q.query<JournalBalanceRow>(
    `SELECT currency,
            ${['escrow_held', 'seller_payable', 'payout_clearing', 'refund_clearing', 'merchant_balance']
              .map(account)
              .join(',\n            ')},
            ${['payout_paid', 'payout_reversed', 'refund_paid'].map(kind).join(',\n            ')}
       FROM ledger_entries
      WHERE merchant_id = $1 AND livemode = $2
      GROUP BY currency
      ORDER BY currency`,
    [owner.merchantId, owner.livemode],
  );
  return rows;
}
