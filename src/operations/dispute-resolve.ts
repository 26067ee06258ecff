import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, invalid, notFound } from '../domain/errors.ts';
import { minorAmountParam } from '../domain/money.ts';
import { heldMinor } from '../domain/plan-move.ts';
import type { Queryable } from '../store/db.ts';
import {
  findDispute,
  hasFailedDisputeRefund,
  lockDispute,
  resolveDisputeRow,
  UNDECIDED,
} from '../store/disputes.ts';
import { insertEvents } from '../store/events.ts';
import { cancelJobs } from '../store/jobs.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { applyMoves } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { checkText, disputeNow } from './dispute-evidence.ts';
import { type DisputeView, loadDisputeView } from './dispute-view.ts';
import { objectEvent, refsOf } from './event-payloads.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { startRefund } from './refund-moves.ts';

export interface ResolveInput {
  decision: 'seller' | 'buyer' | 'split';
  amount_to_seller?: number;
  amount_to_buyer?: number;
  note?: string;
  idempotency_key?: string;
}

/** The operator's idempotency keys live beside the merchant's, in their own namespace. */
export const operatorKey = (key: string) => `operator:${key}`;

/**
 * A split's parts of what is held: one amount given, the other is the rest; both given must add
 * up. Each side gets more than nothing (a whole outcome is decision seller or buyer).
 */
export function splitParts(
  input: ResolveInput,
  held: bigint,
  currency: string,
): { toSellerMinor: bigint; toBuyerMinor: bigint } {
  const seller =
    input.amount_to_seller === undefined
      ? undefined
      : minorAmountParam(input.amount_to_seller, currency, 'amount_to_seller');
  const buyer =
    input.amount_to_buyer === undefined
      ? undefined
      : minorAmountParam(input.amount_to_buyer, currency, 'amount_to_buyer');
  if (seller === undefined && buyer === undefined) {
    throw invalid('amount_to_seller', 'A split needs amount_to_seller or amount_to_buyer (or both).');
  }
  const toSellerMinor = seller ?? held - (buyer ?? 0n);
  const toBuyerMinor = buyer ?? held - toSellerMinor;
  if (seller !== undefined && buyer !== undefined && seller + buyer !== held) {
    throw invalid('amount_to_buyer', 'amount_to_seller and amount_to_buyer must add up to the amount held.');
  }
  const param = seller !== undefined ? 'amount_to_seller' : 'amount_to_buyer';
  if (toSellerMinor <= 0n || toBuyerMinor <= 0n) {
    throw invalid(
      param,
      `A split gives each side a part of the amount held: ${param} must be below the amount held.`,
    );
  }
  return { toSellerMinor, toBuyerMinor };
}

/**
 * Decides a dispute: the operator's outcome moves the money through the state machine, and
 * the dispute records it, in one database transaction with its events. From disputed the case is
 * first put under review (review_dispute). seller: resolve_seller approves all that is held;
 * buyer: resolve_buyer refunds it (a refund settled by the rail); split: resolve_split approves
 * the seller's part and refunds the rest. Idempotent under the key, scoped by the dispute's
 * merchant and environment. 409 when already decided.
 */
export async function resolveDispute(
  ctx: ServiceContext,
  disputeId: string,
  input: ResolveInput,
  idempotencyKey: string | undefined,
): Promise<{ dispute: DisputeView; replayed: boolean }> {
  const key = idempotencyKeyOf(idempotencyKey, input.idempotency_key);
  if (
    input.decision !== 'split' &&
    (input.amount_to_seller !== undefined || input.amount_to_buyer !== undefined)
  ) {
    const param = input.amount_to_seller !== undefined ? 'amount_to_seller' : 'amount_to_buyer';
    throw invalid(
      param,
      `${param} applies only to a split; decision ${input.decision} moves all that is held.`,
    );
  }
  const note = input.note === undefined ? null : checkText(input.note, 'note', 2000);
  const found = await findDispute(ctx.db, disputeId);
  if (!found) throw notFound('dispute', disputeId);
  const outcome = await ctx.db.transaction(async (tx) => {
    const now = await disputeNow(ctx, tx, found);
    return runIdempotent(
      tx,
      {
        owner: { merchantId: found.merchant_id, livemode: found.livemode },
        key: key === undefined ? undefined : operatorKey(key),
        operation: `POST /v1/disputes/${disputeId}/resolve`,
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        // Transaction first, then the dispute: the lock order every path uses.
        const [locked] = await lockTransactions(tx, [found.transaction_id]);
        const dispute = await lockDispute(tx, disputeId);
        if (!locked || !dispute) throw notFound('dispute', disputeId);
        // A decision for the buyer whose refund the rail refused put the transaction back under
        // review: the operator decides again. Any other decided dispute is final.
        const again =
          dispute.status === 'resolved' &&
          locked.status === 'under_review' &&
          (await hasFailedDisputeRefund(tx, dispute.id));
        if (!UNDECIDED.includes(dispute.status) && !again) {
          throw new ApiError('conflict', `The dispute is already ${dispute.status}.`);
        }
        const row = await underReview(ctx, tx, locked, now);
        const held = heldMinor(row);
        let parts = { toSellerMinor: held, toBuyerMinor: 0n };
        if (input.decision === 'seller') {
          await applyMoves(ctx, tx, [{ row, action: 'resolve_seller', now }], 'throw');
        } else {
          if (input.decision === 'split') parts = splitParts(input, held, row.currency);
          else parts = { toSellerMinor: 0n, toBuyerMinor: held };
          const action = input.decision === 'split' ? 'resolve_split' : 'resolve_buyer';
          const options = input.decision === 'split' ? { toSellerMinor: parts.toSellerMinor } : undefined;
          const reason = input.decision === 'split' ? 'dispute_split' : 'dispute_lost';
          const start = { action, options, origin: 'dispute', reason, disputeId } as const;
          await startRefund(ctx, tx, row, start, now);
        }
        const resolved = await resolveDisputeRow(
          tx,
          disputeId,
          {
            decision: input.decision,
            amountToSellerMinor: parts.toSellerMinor,
            amountToBuyerMinor: parts.toBuyerMinor,
            note,
            decidedAt: now,
          },
          again,
        );
        if (!resolved) throw new ApiError('conflict', 'The dispute was decided while this request ran.');
        await cancelJobs(tx, [disputeId], ['dispute_deadline']);
        const view = await loadDisputeView(ctx, disputeId, tx);
        if (!view) throw new Error(`dispute ${disputeId} vanished`);
        await insertEvents(tx, [objectEvent('dispute.resolved', refsOf(row), view, now)]);
        return { status: 200, resourceType: 'dispute', resourceId: disputeId };
      },
    );
  });
  const dispute = await loadDisputeView(ctx, outcome.resourceId);
  if (!dispute) throw notFound('dispute', disputeId);
  return { dispute, replayed: outcome.replayed };
}

/** A disputed transaction is put under review first (the operator takes the case). */
async function underReview(
  ctx: ServiceContext,
  tx: Queryable,
  row: TransactionRow,
  now: Date,
): Promise<TransactionRow> {
  if (row.status !== 'disputed') return row;
  const [applied] = await applyMoves(ctx, tx, [{ row, action: 'review_dispute', now }], 'throw');
  if (!applied) throw new Error('a thrown move cannot be skipped');
  return applied.after;
}
