import { type Static, Type } from 'typebox';
import { EVENT_TYPES } from '../domain/webhooks.ts';
import { ListQueryBase, Nullable, Printable, Timestamp } from './common.ts';

export const AttemptObject = Type.Object({
  number: Type.Integer({ minimum: 1, maximum: 5 }),
  url: Type.String(),
  attempted_at: Timestamp,
  succeeded: Type.Boolean({ description: 'A 2xx within the timeout (10 s).' }),
  status_code: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  response_excerpt: Nullable(Type.String({ description: 'The first 1 KiB of the response body.' })),
  error: Nullable(Type.String({ description: 'Network error, timeout, or refused address.' })),
});

export const DeliveryObject = Type.Object({
  object: Type.Literal('webhook_delivery'),
  id: Type.String(),
  target: Type.Enum(['callback_url', 'webhook_endpoint']),
  webhook_endpoint: Nullable(Type.String()),
  url: Type.String(),
  status: Type.Enum(['pending', 'succeeded', 'failed', 'cancelled']),
  attempts_made: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  superseded_by: Nullable(Type.String({ description: 'The redelivery that replaced this one.' })),
  created_at: Timestamp,
  attempts: Type.Optional(Type.Array(AttemptObject)),
});

export const EventObject = Type.Object({
  object: Type.Literal('event'),
  id: Type.String(),
  type: Type.String(),
  service_transaction_id: Nullable(Type.String()),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  payload: Type.Object(
    { event_id: Type.String(), event_type: Type.String(), occurred_at: Timestamp },
    { additionalProperties: true, description: 'The JSON body the webhook carries.' },
  ),
  delivery_failed: Type.Boolean({
    description: 'The latest delivery to some target used up its five attempts without a 2xx.',
  }),
  deliveries: Type.Array(DeliveryObject),
});
export type EventView = Static<typeof EventObject>;

export const ListEventsQuery = Type.Object(
  {
    ...ListQueryBase,
    type: Type.Optional(Type.Enum(EVENT_TYPES)),
    service_transaction_id: Type.Optional(Printable(64)),
    delivery_failed: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ListEventsFilter = Static<typeof ListEventsQuery>;

export const RedeliverBody = Type.Object(
  { idempotency_key: Type.Optional(Printable(255)) },
  { additionalProperties: false },
);
