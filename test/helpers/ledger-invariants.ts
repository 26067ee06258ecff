import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { TRANSITIONS } from '../../src/domain/state-machine.ts';
import { verifyLedger } from '../../src/operations/verify-ledger.ts';
import type { Db } from '../../src/store/db.ts';

/** Fails with every problem listed when the books do not add up. */
export async function assertLedgerSound(db: Db, merchantId?: string, context = ''): Promise<void> {
  const problems = await verifyLedger(db, { merchantId });
  assert.deepEqual(
    problems,
    [],
    `ledger unsound${context ? ` after ${context}` : ''}:\n${problems.map((p) => `  ${p.check} ${p.subject}: ${p.message}`).join('\n')}`,
  );
}

/** A response is a success or a 4xx in the error envelope; never a 5xx. */
export function assertWellFormed(res: LightMyRequestResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what} answered ${res.statusCode}: ${res.body}`);
  if (res.statusCode >= 400) {
    const body = res.json() as { error?: { code?: unknown; message?: unknown } };
    assert.equal(
      typeof body.error?.code,
      'string',
      `${what} answered ${res.statusCode} without an error code: ${res.body}`,
    );
    assert.equal(
      typeof body.error?.message,
      'string',
      `${what} answered ${res.statusCode} without a message: ${res.body}`,
    );
  }
}

export function errorCode(res: LightMyRequestResponse): string | undefined {
  return (res.json() as { error?: { code?: string } }).error?.code;
}

export interface StatusChange {
  previous_status: string;
  status: string;
  settlement_status: string;
}

/**
 * The transaction.status_changed events of one transaction, oldest first. Events written in one
 * database transaction share a timestamp and their ids are random within a millisecond, so the
 * order is the chain of previous_status to status (a status is never entered twice); events
 * that do not fit the chain (duplicates) come last, so a test comparing the list sees them.
 */
export async function statusChanges(db: Db, transactionId: string): Promise<StatusChange[]> {
  const { rows } = await db.query<{ payload: StatusChange }>(
    `SELECT payload FROM events WHERE service_transaction_id = $1 AND type = 'transaction.status_changed'
      ORDER BY created_at, id`,
    [transactionId],
  );
  const left = rows.map(({ payload: p }) => ({
    previous_status: p.previous_status,
    status: p.status,
    settlement_status: p.settlement_status,
  }));
  const chain: StatusChange[] = [];
  let current = 'pending_payment';
  for (;;) {
    const i = left.findIndex((c) => c.previous_status === current);
    if (i < 0) break;
    const [next] = left.splice(i, 1) as [StatusChange];
    chain.push(next);
    current = next.status;
  }
  return [...chain, ...left];
}

/** How many journal rows of each kind a transaction has. */
export async function journalKinds(db: Db, transactionId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ kind: string; n: number }>(
    'SELECT kind, count(*)::int AS n FROM ledger_entries WHERE transaction_id = $1 GROUP BY kind ORDER BY kind',
    [transactionId],
  );
  return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
}

/** Sets a merchant's test clock to this far ahead of the service clock (as a second process would). */
export async function setClockOffset(db: Db, merchantId: string, offsetMs: number): Promise<void> {
  await db.query('UPDATE merchants SET test_clock_offset_ms = $2 WHERE id = $1', [merchantId, offsetMs]);
}

/**
 * Every transaction's events tell its story: one transaction.created; its status_changed events
 * chain from pending_payment to its current status, each link a move of the state machine, none
 * twice; transaction.paid once if and only if it passed through reserved, transaction.completed
 * once if and only if it reached released.
 */
export async function assertEventTrails(db: Db, merchantId: string, context = ''): Promise<void> {
  const { rows: txns } = await db.query<{ id: string; status: string }>(
    'SELECT id, status FROM transactions WHERE merchant_id = $1',
    [merchantId],
  );
  const { rows: events } = await db.query<{
    service_transaction_id: string;
    type: string;
    payload: StatusChange;
  }>(
    'SELECT service_transaction_id, type, payload FROM events WHERE merchant_id = $1 AND service_transaction_id IS NOT NULL',
    [merchantId],
  );
  const where = context ? ` after ${context}` : '';
  for (const t of txns) {
    const mine = events.filter((e) => e.service_transaction_id === t.id);
    const count = (type: string) => mine.filter((e) => e.type === type).length;
    assert.equal(count('transaction.created'), 1, `${t.id}: transaction.created events${where}`);
    const changes = mine.filter((e) => e.type === 'transaction.status_changed').map((e) => e.payload);
    const path = ['pending_payment'];
    let current = 'pending_payment';
    while (changes.length > 0) {
      const i = changes.findIndex((c) => c.previous_status === current);
      assert.ok(
        i >= 0,
        `${t.id}: status_changed events do not chain from ${path.join(' > ')}: ${JSON.stringify(changes)}${where}`,
      );
      const [next] = changes.splice(i, 1) as [StatusChange];
      assert.ok(
        TRANSITIONS.some((m) => m.from === current && m.to === next.status && m.to !== m.from),
        `${t.id}: ${current} > ${next.status} is not a move of the state machine${where}`,
      );
      current = next.status;
      path.push(current);
    }
    assert.equal(
      current,
      t.status,
      `${t.id}: events end at ${path.join(' > ')} but the status is ${t.status}${where}`,
    );
    assert.equal(
      count('transaction.paid'),
      path.includes('reserved') ? 1 : 0,
      `${t.id}: transaction.paid events for ${path.join(' > ')}${where}`,
    );
    assert.equal(
      count('transaction.completed'),
      path.includes('released') ? 1 : 0,
      `${t.id}: transaction.completed events for ${path.join(' > ')}${where}`,
    );
  }
}
