import type { LightMyRequestResponse } from 'fastify';
import { buyerToken, tokenHash } from '../../src/domain/link-tokens.ts';
import { type Harness, json } from '../helpers/harness.ts';

export interface Purchase {
  id: string;
  /** The payment-link token from the transaction's payment_link URL. */
  token: string;
  paymentLink: string;
  transaction: Record<string, unknown>;
}

/** Creates a transaction through the API and returns its checkout token. */
export async function createPurchase(h: Harness, body: Record<string, unknown> = {}): Promise<Purchase> {
  const res = await h.request({
    method: 'POST',
    url: '/v1/transactions',
    payload: { amount: 1500.5, currency: 'KES', title: 'Used phone', ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  const transaction = json(res);
  const paymentLink = String(transaction.payment_link);
  const token = new URL(paymentLink).pathname.split('/').pop() ?? '';
  return { id: String(transaction.service_transaction_id), token, paymentLink, transaction };
}

/**
 * The buyer page's token. Until transaction create stores buyer_token_hash itself, tests store
 * it (the same value create will write, so this stays correct afterwards).
 */
export async function buyerTokenFor(h: Harness, id: string): Promise<string> {
  const token = buyerToken(h.ctx.linkSecret, id);
  await h.ctx.db.query('UPDATE transactions SET buyer_token_hash = $1 WHERE id = $2', [tokenHash(token), id]);
  return token;
}

/** A plain HTML form post, as a browser without scripts sends it; no API key. */
export function postForm(
  h: Harness,
  url: string,
  fields: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return h.request({
    method: 'POST',
    url,
    key: null,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

export function getPage(h: Harness, url: string): Promise<LightMyRequestResponse> {
  return h.request({ method: 'GET', url, key: null });
}

/** Pays through the API test helper (the page's outcomes, callback delivered at once). */
export async function payByHelper(h: Harness, id: string, payload: Record<string, unknown>): Promise<void> {
  const res = await h.request({ method: 'POST', url: `/v1/test_helpers/transactions/${id}/pay`, payload });
  if (res.statusCode !== 200) throw new Error(`pay failed: ${res.statusCode} ${res.body}`);
}

/** Every table's rows as text, to prove a secret is stored nowhere. */
export async function tablesContaining(h: Harness, needle: string): Promise<string[]> {
  const { rows } = await h.ctx.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const found: string[] = [];
  for (const { table_name } of rows) {
    // Hashes, ids and timestamps are random digits that can hold a short needle by chance: skip them.
    const hit = await h.ctx.db.query(
      `SELECT 1 FROM "${table_name}" t
        WHERE regexp_replace(t::text, '[0-9a-f]{64}|[0-9A-Z]{26}|[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.+Z]+', '', 'g') LIKE $1
        LIMIT 1`,
      [`%${needle}%`],
    );
    if (hit.rowCount > 0) found.push(table_name);
  }
  return found;
}
