import { newId } from '../domain/ids.ts';
import type { TransactionView } from '../schemas/transaction.ts';
import type { NewEvent } from '../store/events.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { buyerLinkUrl, paymentLinkUrl, transactionView } from './transaction-view.ts';

type Urls = Pick<ServiceContext, 'publicUrl' | 'linkSecret'>;

/**
 * Link tokens are kept only as hashes, so a stored event's transaction carries no link URLs;
 * they are rebuilt from the ids below when the event is read or delivered (hydrateEventPayload).
 */
interface RedactedLinks {
  payment_link_id: string;
  transaction_id: string;
}

/** The fields every event carries (resolutions 9), around the transaction it reports. */
export function transactionEvent(
  ctx: Urls,
  type: string,
  row: TransactionRow,
  at: Date,
  extra: Record<string, unknown> = {},
): NewEvent {
  return eventOf(transactionView(ctx, row), type, row, at, extra);
}

/** An event around a transaction view already made (a status change makes one view, not two). */
function eventOf(
  view: TransactionView,
  type: string,
  row: TransactionRow,
  at: Date,
  extra: Record<string, unknown>,
): NewEvent {
  const id = newId('event', at.getTime());
  const { payment_link: _link, buyer_link: _buyer, ...data } = view;
  const redacted: RedactedLinks = { payment_link_id: row.payment_link_id, transaction_id: row.id };
  return {
    id,
    merchant_id: row.merchant_id,
    livemode: row.livemode,
    type,
    service_transaction_id: row.id,
    created_at: at,
    payload: {
      event_id: id,
      event_type: type,
      occurred_at: at.toISOString(),
      service_transaction_id: row.id,
      merchant_reference: row.merchant_reference,
      merchant_order_id: row.merchant_order_id,
      ...extra,
      data,
      _links: redacted,
    },
  };
}

/** What an event about a dispute, refund or payout refers to (resolutions 9). */
export interface EventRefs {
  merchant_id: string;
  livemode: boolean;
  /** Null for an event about no one transaction (a payout). */
  service_transaction_id: string | null;
  merchant_reference: string | null;
  merchant_order_id: string | null;
}

/** An event whose data is a dispute, refund or payout object. */
export function objectEvent(type: string, refs: EventRefs, data: object, at: Date): NewEvent {
  const id = newId('event', at.getTime());
  return {
    id,
    merchant_id: refs.merchant_id,
    livemode: refs.livemode,
    type,
    service_transaction_id: refs.service_transaction_id,
    created_at: at,
    payload: {
      event_id: id,
      event_type: type,
      occurred_at: at.toISOString(),
      service_transaction_id: refs.service_transaction_id,
      merchant_reference: refs.merchant_reference,
      merchant_order_id: refs.merchant_order_id,
      data,
    },
  };
}

/** The references of an event about one transaction. */
export function refsOf(row: TransactionRow): EventRefs {
  return {
    merchant_id: row.merchant_id,
    livemode: row.livemode,
    service_transaction_id: row.id,
    merchant_reference: row.merchant_reference,
    merchant_order_id: row.merchant_order_id,
  };
}

/** transaction.status_changed: every field of spec 2.3 at top level, plus data. */
export function statusChangedEvent(
  ctx: Urls,
  row: TransactionRow,
  previousStatus: string,
  at: Date,
): NewEvent {
  const view = transactionView(ctx, row);
  return eventOf(view, 'transaction.status_changed', row, at, {
    previous_status: previousStatus,
    status: view.status,
    settlement_status: view.settlement_status,
    amount: view.amount,
    currency: view.currency,
  });
}

/** A stored payload as the merchant sees it: the transaction's link URLs rebuilt in place. */
export function hydrateEventPayload(ctx: Urls, stored: Record<string, unknown>): Record<string, unknown> {
  const { _links, ...payload } = stored as { _links?: RedactedLinks } & Record<string, unknown>;
  if (!_links || typeof payload.data !== 'object' || payload.data === null) return payload;
  return {
    ...payload,
    data: {
      ...(payload.data as Record<string, unknown>),
      payment_link: paymentLinkUrl(ctx, _links.payment_link_id),
      buyer_link: buyerLinkUrl(ctx, _links.transaction_id),
    },
  };
}
