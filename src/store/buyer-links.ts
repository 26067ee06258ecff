import type { Queryable } from './db.ts';
import type { TransactionRow } from './transactions.ts';

/** The transaction a buyer-page token opens (tokens are stored only as hashes). */
export async function findTransactionByBuyerTokenHash(
  q: Queryable,
  hash: string,
): Promise<TransactionRow | undefined> {
  const { rows } = await q.query<TransactionRow>('SELECT * FROM transactions WHERE buyer_token_hash = $1', [
    hash,
  ]);
  return rows[0];
}
