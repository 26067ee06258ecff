/**
 * Bulk clones of rows made through the API, for benchmarks that need many transactions: a few
 * templates go through the service, then their rows are copied in SQL with fresh ids.
 */
import { newId } from '../../src/domain/ids.ts';
import { buyerToken, linkToken, tokenHash } from '../../src/domain/link-tokens.ts';
import type { Queryable } from '../../src/store/db.ts';

/**
 * A clone's transaction and payment-link ids, made as the service makes them at the template's
 * time, and the hashes of its link tokens under the service's secret (so the clone's links work).
 */
export function cloneIdentity(
  secret: string,
  createdMs: number,
): { txn: string; link: string; linkHash: string; buyerHash: string } {
  const txn = newId('transaction', createdMs);
  const link = newId('paymentLink', createdMs);
  return {
    txn,
    link,
    linkHash: tokenHash(linkToken(secret, link)),
    buyerHash: tokenHash(buyerToken(secret, txn)),
  };
}

/** The column list of a table, so the clones copy every column, whatever later migrations add. */
export async function columnsOf(db: Queryable, tableName: string): Promise<string[]> {
  const { rows } = await db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [tableName],
  );
  return rows.map((r) => r.column_name);
}

/** INSERT INTO t (every column) SELECT s.column, or its override, FROM <from>. */
export async function cloneInto(
  db: Queryable,
  tableName: string,
  from: string,
  overrides: Record<string, string>,
  params: unknown[],
): Promise<void> {
  const columns = await columnsOf(db, tableName);
  const select = columns.map((c) => overrides[c] ?? `s.${c}`);
  await db.query(
    `INSERT INTO ${tableName} (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${from}`,
    params,
  );
}

/**
 * Clones transactions and their payment links. `cloneMap` is a FROM item aliased `c` with the
 * columns old_txn, new_txn, new_ref, old_link, new_link, link_hash and buyer_hash (the new
 * tokens' hashes); `transactionOverrides` adds or replaces column expressions of the transaction.
 */
export async function cloneTransactionsWithLinks(
  db: Queryable,
  cloneMap: string,
  params: unknown[],
  transactionOverrides: Record<string, string> = {},
): Promise<void> {
  await cloneInto(
    db,
    'transactions',
    `${cloneMap} JOIN transactions s ON s.id = c.old_txn`,
    {
      id: 'c.new_txn',
      merchant_reference: 'c.new_ref',
      payment_link_id: 'c.new_link',
      buyer_token_hash: 'c.buyer_hash',
      ...transactionOverrides,
    },
    params,
  );
  await cloneInto(
    db,
    'payment_links',
    `${cloneMap} JOIN payment_links s ON s.id = c.old_link`,
    { id: 'c.new_link', transaction_id: 'c.new_txn', token_hash: 'c.link_hash' },
    params,
  );
}
