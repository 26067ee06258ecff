import assert from 'node:assert/strict';
import type { Action } from '../../src/domain/state-machine.ts';
import { applyMoves } from '../../src/operations/apply-moves.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { lockTransactions } from '../../src/store/transaction-state.ts';
import { type Harness, json } from '../helpers/harness.ts';

export const DAY_S = 86_400;

export interface Txn {
  service_transaction_id: string;
  status: string;
  settlement_status: string;
  amount_released: number;
  [field: string]: unknown;
}

export interface Line {
  service_transaction_id: string;
  merchant_reference: string | null;
  merchant_order_id: string | null;
  amount: number;
  amount_minor: number;
}

export interface Payout {
  object: 'payout';
  id: string;
  status: string;
  method: string;
  destination: string;
  amount: number;
  amount_minor: number;
  currency: string;
  line_count: number;
  lines: Line[];
  lines_has_more: boolean;
  created_at: string;
  paid_at: string | null;
  failure_reason: string | null;
  livemode: boolean;
}

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export async function post(h: Harness, url: string, payload: Record<string, unknown> = {}, key?: string) {
  return h.request({ method: 'POST', url, payload, key });
}

export async function get<T = Record<string, unknown>>(h: Harness, url: string, key?: string): Promise<T> {
  const res = await h.request({ method: 'GET', url, key });
  assert.equal(res.statusCode, 200, `GET ${url}: ${res.body}`);
  return json<T>(res);
}

/** Test payout settings: mobile money to a number the simulated rail pays, as soon as funds are approved. */
export const INSTANT = { method: 'mobile_money', phone: '+254711223344', schedule: 'instant' };

/** A new merchant with its test payout settings saved (INSTANT unless others are given). */
export async function merchantPayingOut(
  h: Harness,
  settings: Record<string, unknown> = INSTANT,
  options: { verified?: boolean } = {},
): Promise<{ m: CreatedMerchant; key: string }> {
  const m = await h.newMerchant(options);
  const saved = await post(h, '/v1/payout_settings', settings, m.test_key);
  assert.equal(saved.statusCode, 200, saved.body);
  return { m, key: m.test_key };
}

/** A test transaction created and paid (reserved), through the API. */
export async function paidTransaction(
  h: Harness,
  body: Record<string, unknown> = {},
  key?: string,
): Promise<Txn> {
  const created = await post(h, '/v1/transactions', { amount: 1000, title: 'Payout test', ...body }, key);
  assert.equal(created.statusCode, 201, created.body);
  const id = json<Txn>(created).service_transaction_id;
  const paid = await post(
    h,
    `/v1/test_helpers/transactions/${id}/pay`,
    { method: 'mobile_money', phone: '+254712345678' },
    key,
  );
  assert.equal(paid.statusCode, 200, paid.body);
  assert.equal(json<Txn>(paid).status, 'reserved');
  return json<Txn>(paid);
}

/** A test transaction paid and confirmed: its whole amount approved for release. */
export async function approvedTransaction(
  h: Harness,
  body: Record<string, unknown> = {},
  key?: string,
): Promise<Txn> {
  const paid = await paidTransaction(h, body, key);
  const confirmed = await post(h, `/v1/transactions/${paid.service_transaction_id}/confirm`, {}, key);
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  return json<Txn>(confirmed);
}

/** Moves the harness merchant's test clock forward; every job due by then has run when it answers. */
export async function advance(
  h: Harness,
  seconds: number,
  key?: string,
): Promise<{ now: string; jobs_run: number }> {
  const res = await post(h, '/v1/test_helpers/clock/advance', { seconds }, key);
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

/** Seconds from the merchant's test time to the next midnight UTC. */
export async function secondsToMidnight(h: Harness, key?: string): Promise<number> {
  const { now } = await advance(h, 1, key);
  const at = new Date(now);
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.ceil((midnight - at.getTime()) / 1000);
}

export async function listPayouts(h: Harness, query = '', key?: string): Promise<List<Payout>> {
  return get<List<Payout>>(h, `/v1/payouts${query}`, key);
}

export async function transaction(h: Harness, id: string, key?: string): Promise<Txn> {
  return get<Txn>(h, `/v1/transactions/${id}`, key);
}

/** The events of a merchant of one type, oldest first. */
export async function eventsOf(
  h: Harness,
  merchantId: string,
  type: string,
): Promise<Array<Record<string, unknown> & { data: Record<string, unknown> }>> {
  const { rows } = await h.ctx.db.query<{
    payload: Record<string, unknown> & { data: Record<string, unknown> };
  }>('SELECT payload FROM events WHERE merchant_id = $1 AND type = $2 ORDER BY created_at, id', [
    merchantId,
    type,
  ]);
  return rows.map((r) => r.payload);
}

/**
 * Moves a transaction with the state machine directly (a live capture: no live collection rail
 * is wired in tests), the way the rail's callback would.
 */
export async function move(h: Harness, id: string, action: Action): Promise<void> {
  await h.ctx.db.transaction(async (tx) => {
    const [row] = await lockTransactions(tx, [id]);
    assert.ok(row, `transaction ${id}`);
    await applyMoves(h.ctx, tx, [{ row, action, now: h.ctx.clock.now() }], 'throw');
  });
}
