import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { type CollectionMethod, type CollectionResult, PUSH_TIMEOUT_SECONDS } from '../rails/collection.ts';
import { isUniqueViolation, type Queryable } from '../store/db.ts';
import { cancelJobs, newJob, scheduleJobs } from '../store/jobs.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import {
  findAttempt,
  finishAttempt,
  insertAttempt,
  lockAttempt,
  markAttemptStarted,
  type PaymentAttemptRow,
} from '../store/payment-attempts.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import { applyMoves } from './apply-moves.ts';
import { collectionRail } from './collection-rails.ts';
import type { ServiceContext } from './context.ts';
import { merchantNow } from './merchant-clock.ts';

export interface PaymentDetails {
  method: CollectionMethod;
  phone?: string;
  card_number?: string;
}

function instrumentOf(details: PaymentDetails): string {
  const digits = details.method === 'card' ? details.card_number : details.phone;
  if (!digits) {
    throw new ApiError(
      'invalid_request',
      details.method === 'card'
        ? 'card_number is required for card payments.'
        : 'phone is required for mobile money.',
      { param: details.method === 'card' ? 'card_number' : 'phone' },
    );
  }
  return digits.slice(-4);
}

function paymentMethodOf(attempt: PaymentAttemptRow): Record<string, unknown> {
  return attempt.method === 'card'
    ? { type: 'card', last4: attempt.instrument }
    : { type: 'mobile_money', phone_last4: attempt.instrument };
}

/**
 * Starts a payment of a pending_payment transaction on its rail. The attempt is recorded first
 * (one in flight per transaction), the rail is called outside any database transaction, and its
 * immediate answer recorded after; asynchronous answers arrive through reportCollectionResult.
 */
export async function startPayment(
  ctx: ServiceContext,
  transactionId: string,
  details: PaymentDetails,
): Promise<PaymentAttemptRow> {
  const instrument = instrumentOf(details);
  const attemptId = newId('paymentAttempt');
  const started = await ctx.db.transaction(async (tx) => {
    const [row] = await lockTransactions(tx, [transactionId]);
    if (!row) throw new ApiError('not_found', `No such transaction: '${transactionId}'.`);
    if (row.status !== 'pending_payment') {
      throw new ApiError('conflict', `This transaction cannot be paid: its status is ${row.status}.`);
    }
    const clock = await findMerchantClock(tx, row.merchant_id);
    const now = merchantNow(ctx, { livemode: row.livemode, testClockOffsetMs: clock });
    const rail = collectionRail(ctx, details.method, {
      merchantId: row.merchant_id,
      livemode: row.livemode,
      now,
    });
    try {
      await insertAttempt(tx, {
        id: attemptId,
        transaction_id: row.id,
        merchant_id: row.merchant_id,
        livemode: row.livemode,
        method: details.method,
        status: 'pending',
        instrument,
        rail_reference: null,
        failure_code: null,
        failure_message: null,
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('conflict', 'A payment for this transaction is already in progress.');
      }
      throw error;
    }
    // Whatever happens to the rail call, an attempt that never hears back ends as timed out.
    await scheduleJobs(tx, [
      newJob(
        {
          kind: 'payment_timeout',
          merchantId: row.merchant_id,
          livemode: row.livemode,
          subjectId: attemptId,
          runAt: new Date(now.getTime() + (rail.resultTimeoutSeconds ?? PUSH_TIMEOUT_SECONDS) * 1000),
        },
        now,
      ),
    ]);
    return { row, rail, now };
  });

  const answer = await started.rail.start({
    attemptId,
    method: details.method,
    amountMinor: started.row.amount_minor,
    currency: started.row.currency,
    phone: details.phone,
    cardNumber: details.card_number,
    description: started.row.title,
  });
  if (answer.status === 'succeeded') {
    await reportCollectionResult(ctx, {
      attemptId,
      outcome: 'succeeded',
      railReference: answer.railReference,
    });
  } else if (answer.status === 'failed') {
    await reportCollectionResult(ctx, {
      attemptId,
      outcome: 'failed',
      code: answer.code,
      message: answer.message,
    });
  } else {
    // Transaction first, then its attempt, as on every path (this also updates the transaction's
    // attempt summary): taking the attempt first deadlocked with a second payment or the worker.
    await ctx.db.transaction(async (tx) => {
      await lockTransactions(tx, [transactionId]);
      await markAttemptStarted(tx, attemptId, answer.status, answer.railReference);
    });
  }
  const attempt = await findAttempt(ctx.db, attemptId);
  if (!attempt) throw new Error(`attempt ${attemptId} vanished`);
  return attempt;
}

/**
 * Applies a rail's result to its attempt, inside the caller's database transaction: success
 * captures the transaction (pending_payment to reserved, funds into escrow); failure leaves it
 * payable. Repeated results are ignored, so a rail that calls back twice changes nothing twice.
 *
 * Lock order, as everywhere: the transaction, then its attempt. startPayment holds the
 * transaction while its insert waits on an attempt being finished, so taking the attempt first
 * here would deadlock with a second payment started at that moment.
 */
export async function applyCollectionResult(
  ctx: ServiceContext,
  tx: Queryable,
  result: CollectionResult,
): Promise<void> {
  const found = await findAttempt(tx, result.attemptId);
  if (!found) return;
  await lockTransactions(tx, [found.transaction_id]);
  const attempt = await lockAttempt(tx, result.attemptId);
  if (!attempt || (attempt.status !== 'pending' && attempt.status !== 'requires_action')) return;
  const clock = await findMerchantClock(tx, attempt.merchant_id);
  const now = merchantNow(ctx, { livemode: attempt.livemode, testClockOffsetMs: clock });
  if (result.outcome === 'failed') {
    await finishAttempt(
      tx,
      attempt.id,
      { status: 'failed', failureCode: result.code, failureMessage: result.message },
      now,
    );
  } else {
    await finishAttempt(tx, attempt.id, { status: 'succeeded', railReference: result.railReference }, now);
    const [row] = await lockTransactions(tx, [attempt.transaction_id]);
    if (!row) throw new Error(`transaction ${attempt.transaction_id} of attempt ${attempt.id} vanished`);
    await applyMoves(
      ctx,
      tx,
      [{ row, action: 'capture', now, paymentMethod: paymentMethodOf(attempt) }],
      'throw',
    );
  }
  await cancelJobs(tx, [attempt.id], ['payment_timeout', 'rail_callback']);
}

export async function reportCollectionResult(ctx: ServiceContext, result: CollectionResult): Promise<void> {
  await ctx.db.transaction((tx) => applyCollectionResult(ctx, tx, result));
}
