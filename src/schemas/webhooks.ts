import { type Static, Type } from 'typebox';
import { EVENT_TYPES } from '../domain/webhooks.ts';
import { ListQueryBase, Nullable, Printable, Timestamp } from './common.ts';

const IdempotencyKeyField = Type.Optional(Printable(255));

const EnabledEvents = Type.Array(Type.Enum(['*', ...EVENT_TYPES]), {
  minItems: 1,
  maxItems: EVENT_TYPES.length + 1,
  uniqueItems: true,
  description: "Event types to send, or ['*'] for all (the default).",
});

const WebhookUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  description:
    'https (http also in test mode), no credentials; in live mode it must resolve to public addresses only.',
});

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: WebhookUrl,
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Printable(500)),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type CreateWebhookEndpointInput = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Nullable(Printable(500))),
    disabled: Type.Optional(
      Type.Boolean({ description: 'true stops deliveries to the endpoint (pending ones are cancelled).' }),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type UpdateWebhookEndpointInput = Static<typeof UpdateWebhookEndpointBody>;

export const RotateSecretBody = Type.Object(
  { idempotency_key: IdempotencyKeyField },
  { additionalProperties: false },
);

const endpointFields = {
  object: Type.Literal('webhook_endpoint'),
  id: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  enabled_events: Type.Array(Type.String()),
  status: Type.Enum(['enabled', 'disabled']),
  failing: Type.Boolean({
    description: "Set when an event's last (5th) attempt failed; cleared by the next success.",
  }),
  failing_since: Nullable(Timestamp),
  last_alert_at: Nullable(Timestamp),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookEndpointObject = Type.Object(endpointFields);
export type WebhookEndpointView = Static<typeof WebhookEndpointObject>;

export const CreatedWebhookEndpointObject = Type.Object({
  ...endpointFields,
  secret: Type.String({
    description:
      "The environment's signing secret (whsec_…), shown here and on rotation only. One secret signs every webhook of the environment.",
  }),
});

export const DeletedWebhookEndpointObject = Type.Object({
  object: Type.Literal('webhook_endpoint'),
  id: Type.String(),
  deleted: Type.Literal(true),
});

export const ListWebhookEndpointsQuery = Type.Object({ ...ListQueryBase }, { additionalProperties: false });
export type ListWebhookEndpointsFilter = Static<typeof ListWebhookEndpointsQuery>;

export const WebhookSecretObject = Type.Object({
  object: Type.Literal('webhook_secret'),
  secret: Type.String({ description: 'whsec_…: signs every webhook of this environment from now on.' }),
  livemode: Type.Boolean(),
  created_at: Timestamp,
});

export const EgressRangesObject = Type.Object({
  object: Type.Literal('webhook_egress_ranges'),
  ranges: Type.Array(Type.String({ description: 'CIDR, e.g. 192.0.2.0/24' })),
});

export const CallbackTargetObject = Type.Object({
  object: Type.Literal('callback_target'),
  origin: Type.String({ description: 'scheme://host:port of the callback URLs it covers.' }),
  failing: Type.Boolean(),
  failing_since: Nullable(Timestamp),
  last_alert_at: Nullable(Timestamp),
  last_failed_url: Nullable(Type.String()),
  last_failed_event_id: Nullable(Type.String()),
  livemode: Type.Boolean(),
  updated_at: Timestamp,
});
export type CallbackTargetView = Static<typeof CallbackTargetObject>;
