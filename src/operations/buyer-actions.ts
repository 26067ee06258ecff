import { ApiError } from '../domain/errors.ts';
import { tokenHash } from '../domain/link-tokens.ts';
import { findTransactionByBuyerTokenHash } from '../store/buyer-links.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import { applyMoves } from './apply-moves.ts';
import { isWellFormedToken, type ReleaseTerms, releaseTerms, sellerNameOf } from './checkout.ts';
import type { ServiceContext } from './context.ts';
import { merchantNow } from './merchant-clock.ts';
import { paymentLinkUrl } from './transaction-view.ts';

/**
 * What the buyer does on their own page, opened by the buyer token (buyer_link): see the
 * purchase and confirm receipt. Disputes join here with the disputes issue.
 */

export interface BuyerView {
  status: string;
  title: string;
  amountMinor: bigint;
  releasedMinor: bigint;
  refundedMinor: bigint;
  currency: string;
  sellerName: string;
  livemode: boolean;
  terms: ReleaseTerms;
  /** The checkout link while the purchase still waits for payment. */
  paymentLink: string | null;
  canConfirm: boolean;
}

const CONFIRMABLE = new Set(['reserved', 'delivered']);

function badToken(): ApiError {
  return new ApiError('authentication_failed', 'This buyer link is not valid.');
}

export async function loadBuyerView(ctx: ServiceContext, token: string): Promise<BuyerView | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const row = await findTransactionByBuyerTokenHash(ctx.db, tokenHash(token));
  if (!row) return undefined;
  return {
    status: row.status,
    title: row.title,
    amountMinor: row.amount_minor,
    releasedMinor: row.amount_released_minor,
    refundedMinor: row.amount_refunded_minor,
    currency: row.currency,
    sellerName: await sellerNameOf(ctx, row),
    livemode: row.livemode,
    terms: releaseTerms(row),
    paymentLink: row.status === 'pending_payment' ? paymentLinkUrl(ctx, row.payment_link_id) : null,
    canConfirm: CONFIRMABLE.has(row.status),
  };
}

/**
 * The buyer confirms receipt: the transaction is locked and the state machine's confirm move
 * applied (funds approved for release, ledger, events, jobs) in one database transaction.
 * A move the table does not allow is a 409 conflict; a bad token is authentication_failed.
 */
export async function confirmAsBuyer(ctx: ServiceContext, token: string): Promise<{ status: string }> {
  if (!isWellFormedToken(token)) throw badToken();
  const hash = tokenHash(token);
  return ctx.db.transaction(async (tx) => {
    const found = await findTransactionByBuyerTokenHash(tx, hash);
    if (!found) throw badToken();
    const [row] = await lockTransactions(tx, [found.id]);
    if (!row) throw badToken();
    const offset = await findMerchantClock(tx, row.merchant_id);
    const now = merchantNow(ctx, { livemode: row.livemode, testClockOffsetMs: offset });
    const [applied] = await applyMoves(ctx, tx, [{ row, action: 'confirm', now }], 'throw');
    return { status: applied?.after.status ?? row.status };
  });
}
