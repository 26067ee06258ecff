import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { minorAmountParam } from '../domain/money.ts';
import { findMove } from '../domain/state-machine.ts';
import type { CreateRefundInput, ListRefundsFilter } from '../schemas/refunds.ts';
import type { Queryable } from '../store/db.ts';
import { findOwnedRefund, listRefunds, refundsAfterReleaseDays } from '../store/refunds.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { type ListView, listView, pageFilterOf } from './list-view.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { startRefund } from './refund-moves.ts';
import { type RefundView, refundView } from './refund-view.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Why a transaction in this state cannot be refunded through the API (the table has no refund move). */
const NO_REFUND_BECAUSE: Record<string, string> = {
  pending_payment: 'it has not been paid; cancel it instead',
  cancelled: 'it was never paid',
  expired: 'it was never paid',
  confirmed:
    'its funds are approved for release and wait for the seller’s payout; once the payout is paid, ' +
    'a refund comes from the merchant’s balance',
  disputed: 'a dispute is open; its outcome decides what goes back to the buyer',
  under_review: 'a dispute is under review; its outcome decides what goes back to the buyer',
  refunded: 'it is already refunded',
};

function noRefundConflict(row: TransactionRow): ApiError {
  const why =
    row.status === 'released' && row.settlement_status === 'reversed'
      ? 'its payout was reversed, so the funds are back with the service'
      : NO_REFUND_BECAUSE[row.status];
  return new ApiError(
    'conflict',
    `Cannot refund a transaction whose status is ${row.status}${why ? `: ${why}` : ''}.`,
  );
}

/**
 * Paid-out funds may be refunded from the merchant's balance only within the merchant agreement's
 * window after release (refunds_after_release_days, default 30), on the merchant's clock. The
 * window starts at released_at, when the transaction's last payout was paid.
 */
export async function balanceRefundAllowed(tx: Queryable, row: TransactionRow, now: Date): Promise<boolean> {
  if (row.released_at === null) return false;
  const days = await refundsAfterReleaseDays(tx, row.merchant_id);
  return now.getTime() < row.released_at.getTime() + days * DAY_MS;
}

async function lockRefundable(
  tx: Queryable,
  owner: { merchantId: string; livemode: boolean },
  id: string,
): Promise<TransactionRow> {
  const [row] = await lockTransactions(tx, [id]);
  if (!row || row.merchant_id !== owner.merchantId || row.livemode !== owner.livemode) {
    throw new ApiError('not_found', `No such transaction: '${id}'.`, { param: 'service_transaction_id' });
  }
  return row;
}

/**
 * POST /v1/refunds: refunds all that is refundable, or `amount`, of a transaction the caller owns.
 * The move (escrow and/or merchant balance → refund clearing), the refund row and its settlement
 * job are written in one database transaction under the idempotency key; the rail's answer comes
 * later through the settle_refund job.
 */
export async function createRefund(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: CreateRefundInput,
  headerKey: string | undefined,
): Promise<{ refund: RefundView; replayed: boolean }> {
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);

  // The answer is the refund as this request left it, not whatever the rail made of it since.
  let created: RefundView | undefined;
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      { owner, key, operation: 'POST /v1/refunds', fingerprint: requestFingerprint(input), now },
      async () => {
        const row = await lockRefundable(tx, owner, input.service_transaction_id);
        const amountMinor =
          input.amount === undefined ? undefined : minorAmountParam(input.amount, row.currency, 'amount');
        if (!findMove('refund', row.status, row.settlement_status)) throw noRefundConflict(row);
        const options = { amountMinor, balanceRefundAllowed: await balanceRefundAllowed(tx, row, now) };
        const start = { action: 'refund', options, origin: 'api', reason: input.reason ?? null } as const;
        const { transaction, refund } = await startRefund(ctx, tx, row, start, now);
        // planMove refuses a refund of nothing (409), so a refund row always exists here.
        if (!refund) throw new Error('a refund move refunded nothing');
        created = refundView(refund, transaction);
        return { status: 201, resourceType: 'refund', resourceId: refund.id };
      },
    ),
  );
  if (!outcome.replayed && created) return { refund: created, replayed: false };
  return { refund: await getRefund(ctx, merchant, outcome.resourceId), replayed: outcome.replayed };
}

export async function getRefund(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<RefundView> {
  const row = await findOwnedRefund(ctx.db, ownerOf(merchant), id);
  if (!row) throw notFound('refund', id);
  return refundView(row, row);
}

export async function listRefundViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  filter: ListRefundsFilter,
): Promise<ListView<RefundView>> {
  const { rows, hasMore } = await listRefunds(ctx.db, ownerOf(merchant), {
    ...pageFilterOf(filter),
    transactionId: filter.service_transaction_id,
    status: filter.status,
  });
  return listView(
    rows.map((row) => refundView(row, row)),
    hasMore,
  );
}
