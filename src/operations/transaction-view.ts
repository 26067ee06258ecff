import { buyerToken, linkToken } from '../domain/link-tokens.ts';
import { type Currency, toMajorUnits } from '../domain/money.ts';
import type { SettlementStatus, TransactionStatus } from '../domain/transaction-states.ts';
import type { TransactionView } from '../schemas/transaction.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';

export function paymentLinkUrl(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  linkId: string,
): string {
  return `${ctx.publicUrl}/pay/${linkToken(ctx.linkSecret, linkId)}`;
}

/** The buyer page of a transaction (confirm receipt); its token is separate from the payment link's. */
export function buyerLinkUrl(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  transactionId: string,
): string {
  return `${ctx.publicUrl}/buyer/${buyerToken(ctx.linkSecret, transactionId)}`;
}

/** The API's transaction object (resolutions 4): major-unit amounts beside their minor units. */
export function transactionView(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  row: TransactionRow,
): TransactionView {
  const currency = row.currency as Currency;
  return {
    object: 'transaction',
    service_transaction_id: row.id,
    merchant_reference: row.merchant_reference,
    merchant_order_id: row.merchant_order_id,
    status: row.status as TransactionStatus,
    settlement_status: row.settlement_status as SettlementStatus,
    amount: toMajorUnits(row.amount_minor, currency),
    amount_minor: Number(row.amount_minor),
    currency: row.currency,
    title: row.title,
    vertical: row.vertical,
    customer: row.customer,
    seller: row.seller,
    release_condition: row.release_condition,
    review_deadline: row.review_deadline?.toISOString() ?? null,
    payment_link: paymentLinkUrl(ctx, row.payment_link_id),
    buyer_link: buyerLinkUrl(ctx, row.id),
    payment_method: row.payment_method,
    last_payment_attempt: row.last_payment_attempt,
    amount_released: toMajorUnits(row.amount_released_minor, currency),
    amount_refunded: toMajorUnits(row.amount_refunded_minor, currency),
    callback_url: row.callback_url,
    metadata: row.metadata,
    livemode: row.livemode,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
