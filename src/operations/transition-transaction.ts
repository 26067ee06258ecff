import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { minorAmountParam } from '../domain/money.ts';
import type { TransactionView } from '../schemas/transaction.ts';
import type { Queryable } from '../store/db.ts';
import { attemptInFlight } from '../store/payment-attempts.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import { findTransaction, type TransactionRow } from '../store/transactions.ts';
import { applyMoves } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { startRefund } from './refund-moves.ts';
import { transactionView } from './transaction-view.ts';

/** The state-changing verbs of POST /v1/transactions/{id}/{verb}. */
export type TransactionVerb = 'deliver' | 'confirm' | 'release' | 'cancel';

export interface TransitionInput {
  /** Release only: a major-unit amount below what is held makes a partial release. */
  amount?: number;
  idempotency_key?: string;
}

export async function lockOwnedTransaction(
  tx: Queryable,
  owner: { merchantId: string; livemode: boolean },
  id: string,
): Promise<TransactionRow> {
  const [row] = await lockTransactions(tx, [id]);
  if (!row || row.merchant_id !== owner.merchantId || row.livemode !== owner.livemode) {
    throw notFound('transaction', id);
  }
  return row;
}

/**
 * Runs one verb on a transaction the caller owns, under its idempotency key: the row is locked,
 * the move looked up in the state machine, and the change, ledger, events and jobs written in one
 * database transaction. A delivery_confirmation transaction is released by its delivery.
 */
export async function transitionTransaction(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  verb: TransactionVerb,
  input: TransitionInput,
  headerKey: string | undefined,
): Promise<{ transaction: TransactionView; replayed: boolean }> {
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);

  // The answer is the state this request left, not whatever a later request made of it.
  let result: TransactionRow | undefined;
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      {
        owner,
        key,
        operation: `POST /v1/transactions/${id}/${verb}`,
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        const row = await lockOwnedTransaction(tx, owner, id);
        const amountMinor =
          input.amount === undefined ? undefined : minorAmountParam(input.amount, row.currency, 'amount');
        if (verb === 'cancel' && row.status === 'pending_payment' && (await attemptInFlight(tx, id))) {
          throw new ApiError(
            'conflict',
            'A payment for this transaction is in progress; cancel it after the payment succeeds or fails.',
          );
        }
        if (verb === 'cancel' && row.status !== 'pending_payment') {
          // A cancel after payment gives the held funds back: a refund, settled by the rail.
          const start = { action: verb, origin: 'cancel', reason: 'cancelled' } as const;
          result = (await startRefund(ctx, tx, row, start, now)).transaction;
        } else {
          const options = amountMinor === undefined ? undefined : { amountMinor };
          const [applied] = await applyMoves(ctx, tx, [{ row, action: verb, now, options }], 'throw');
          result = applied?.after;
        }
        if (verb === 'deliver' && result?.release_condition.type === 'delivery_confirmation') {
          const [released] = await applyMoves(ctx, tx, [{ row: result, action: 'release', now }], 'throw');
          result = released?.after;
        }
        return { status: 200, resourceType: 'transaction', resourceId: id };
      },
    ),
  );
  const row = (!outcome.replayed && result) || (await findTransaction(ctx.db, owner, outcome.resourceId));
  if (!row) throw notFound('transaction', id);
  return { transaction: transactionView(ctx, row), replayed: outcome.replayed };
}
