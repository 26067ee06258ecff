import type { Queryable } from './db.ts';

export type AttemptStatus = 'pending' | 'requires_action' | 'succeeded' | 'failed';

export interface PaymentAttemptRow {
  id: string;
  transaction_id: string;
  merchant_id: string;
  livemode: boolean;
  method: 'mobile_money' | 'card';
  status: AttemptStatus;
  instrument: string;
  rail_reference: string | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertAttempt(q: Queryable, a: PaymentAttemptRow): Promise<void> {
  await q.query(
    `INSERT INTO payment_attempts (id, transaction_id, merchant_id, livemode, method, status, instrument,
        rail_reference, failure_code, failure_message, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      a.id,
      a.transaction_id,
      a.merchant_id,
      a.livemode,
      a.method,
      a.status,
      a.instrument,
      a.rail_reference,
      a.failure_code,
      a.failure_message,
      a.created_at,
      a.updated_at,
    ],
  );
  await syncLastAttempt(q, a.id);
}

/** Copies an attempt's summary onto its transaction, which shows its latest attempt. */
async function syncLastAttempt(q: Queryable, attemptId: string): Promise<void> {
  await q.query(
    `UPDATE transactions t
        SET last_payment_attempt_id = a.id,
            last_payment_attempt = jsonb_build_object(
              'id', a.id, 'method', a.method, 'status', a.status, 'instrument_last4', a.instrument,
              'failure_code', a.failure_code, 'failure_message', a.failure_message,
              'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       FROM payment_attempts a
      WHERE a.id = $1 AND t.id = a.transaction_id`,
    [attemptId],
  );
}

/** Records the rail's first answer to an attempt still pending (a push sent, a challenge needed). */
export async function markAttemptStarted(
  q: Queryable,
  id: string,
  status: 'pending' | 'requires_action',
  railReference: string,
): Promise<void> {
  const { rowCount } = await q.query(
    `UPDATE payment_attempts SET status = $2, rail_reference = $3 WHERE id = $1 AND status = 'pending'`,
    [id, status, railReference],
  );
  if (rowCount > 0) await syncLastAttempt(q, id);
}

export async function lockAttempt(q: Queryable, id: string): Promise<PaymentAttemptRow | undefined> {
  const { rows } = await q.query<PaymentAttemptRow>(
    'SELECT * FROM payment_attempts WHERE id = $1 FOR UPDATE',
    [id],
  );
  return rows[0];
}

export async function findAttempt(q: Queryable, id: string): Promise<PaymentAttemptRow | undefined> {
  const { rows } = await q.query<PaymentAttemptRow>('SELECT * FROM payment_attempts WHERE id = $1', [id]);
  return rows[0];
}

/** Settles an attempt that is still in flight; false if it had already ended (a repeated callback). */
export async function finishAttempt(
  q: Queryable,
  id: string,
  result: {
    status: AttemptStatus;
    railReference?: string | null;
    failureCode?: string | null;
    failureMessage?: string | null;
  },
  at: Date,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE payment_attempts
        SET status = $2, rail_reference = coalesce($3, rail_reference), failure_code = $4, failure_message = $5,
            updated_at = $6
      WHERE id = $1 AND status IN ('pending', 'requires_action')`,
    [
      id,
      result.status,
      result.railReference ?? null,
      result.failureCode ?? null,
      result.failureMessage ?? null,
      at,
    ],
  );
  if (rowCount > 0) await syncLastAttempt(q, id);
  return rowCount > 0;
}

export async function attemptInFlight(q: Queryable, transactionId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `SELECT 1 FROM payment_attempts WHERE transaction_id = $1 AND status IN ('pending', 'requires_action')`,
    [transactionId],
  );
  return rowCount > 0;
}

/** The attempt a rail's reference names (a Daraja callback's CheckoutRequestID). */
export async function findAttemptByRailReference(
  q: Queryable,
  railReference: string,
): Promise<PaymentAttemptRow | undefined> {
  const { rows } = await q.query<PaymentAttemptRow>(
    'SELECT * FROM payment_attempts WHERE rail_reference = $1 ORDER BY created_at DESC LIMIT 1',
    [railReference],
  );
  return rows[0];
}
