import { newId } from '../domain/ids.ts';
import type { TransactionView } from '../schemas/transaction.ts';
import type { NewEvent } from '../store/events.ts';

/** The fields every event carries (resolutions 9), around the object it reports. */
export function transactionEvent(
  type: string,
  view: TransactionView,
  merchantId: string,
  at: Date,
  extra: Record<string, unknown> = {},
): NewEvent {
  const id = newId('event', at.getTime());
  return {
    id,
    merchant_id: merchantId,
    livemode: view.livemode,
    type,
    service_transaction_id: view.service_transaction_id,
    created_at: at,
    payload: {
      event_id: id,
      event_type: type,
      occurred_at: at.toISOString(),
      service_transaction_id: view.service_transaction_id,
      merchant_reference: view.merchant_reference,
      merchant_order_id: view.merchant_order_id,
      ...extra,
      data: view,
    },
  };
}

/** transaction.status_changed: every field of spec 2.3 at top level, plus data. */
export function statusChangedEvent(
  view: TransactionView,
  previousStatus: string,
  merchantId: string,
  at: Date,
): NewEvent {
  return transactionEvent('transaction.status_changed', view, merchantId, at, {
    previous_status: previousStatus,
    status: view.status,
    settlement_status: view.settlement_status,
    amount: view.amount,
    currency: view.currency,
  });
}
