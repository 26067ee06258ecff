import type { Static } from 'typebox';
import { type Currency, toMajorUnits } from '../domain/money.ts';
import type { RefundObject } from '../schemas/refunds.ts';
import type { RefundRow } from '../store/refunds.ts';
import type { TransactionRow } from '../store/transactions.ts';

/** A refund as the API and its events show it (resolutions 8; schema in src/schemas/refunds.ts). */
export type RefundView = Static<typeof RefundObject>;

export function refundView(
  refund: RefundRow,
  txn: Pick<TransactionRow, 'merchant_reference' | 'merchant_order_id'>,
): RefundView {
  return {
    object: 'refund',
    id: refund.id,
    status: refund.status,
    amount: toMajorUnits(refund.amount_minor, refund.currency as Currency),
    amount_minor: Number(refund.amount_minor),
    currency: refund.currency,
    service_transaction_id: refund.transaction_id,
    merchant_reference: txn.merchant_reference,
    merchant_order_id: txn.merchant_order_id,
    reason: refund.reason,
    origin: refund.origin,
    dispute_id: refund.dispute_id,
    failure_reason: refund.failure_reason,
    livemode: refund.livemode,
    created_at: refund.created_at.toISOString(),
    updated_at: refund.updated_at.toISOString(),
  };
}
