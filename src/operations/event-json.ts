import { TransactionObject } from '../schemas/transaction.ts';
import type { ServiceContext } from './context.ts';
import { hydrateEventPayload } from './event-payloads.ts';

/**
 * An event as merchants see it, delivered or read: link URLs rebuilt (hydrateEventPayload), and
 * the fields in a readable order (jsonb keeps keys in its own order): the event's own fields as
 * spec 2.3 lists them, then anything else, then `data`, itself in the transaction object's order.
 */
const EVENT_ORDER = [
  'event_id',
  'event_type',
  'occurred_at',
  'service_transaction_id',
  'merchant_reference',
  'merchant_order_id',
  'previous_status',
  'status',
  'settlement_status',
  'amount',
  'currency',
];
const TRANSACTION_ORDER = Object.keys(TransactionObject.properties);

function ordered(
  value: Record<string, unknown>,
  order: readonly string[],
  last?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of order) if (key in value) out[key] = value[key];
  for (const key of Object.keys(value)) if (!(key in out) && key !== last) out[key] = value[key];
  if (last !== undefined && last in value) out[last] = value[last];
  return out;
}

export function eventPayload(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  stored: Record<string, unknown>,
): Record<string, unknown> {
  const payload = ordered(hydrateEventPayload(ctx, stored), EVENT_ORDER, 'data');
  const data = payload.data;
  if (typeof data === 'object' && data !== null && (data as { object?: unknown }).object === 'transaction') {
    payload.data = ordered(data as Record<string, unknown>, TRANSACTION_ORDER);
  }
  return payload;
}
