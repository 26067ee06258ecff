import { type Static, Type } from 'typebox';
import { ListQueryBase, Nullable, Printable, Timestamp } from './common.ts';

/** Why a merchant refunds (POST /v1/refunds), as in Stripe's refund reasons. */
export const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'other'] as const;

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const CreateRefundBody = Type.Object(
  {
    service_transaction_id: Printable(64, 'The transaction to refund.'),
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1_000_000_000,
        description:
          "Major units, with at most the currency's decimals. Default: everything still refundable " +
          '(what is held, plus paid-out funds while the merchant agreement allows).',
      }),
    ),
    reason: Type.Optional(
      Type.Enum(REFUND_REASONS, { description: 'duplicate, fraudulent, requested_by_customer or other.' }),
    ),
    idempotency_key: Type.Optional(Printable(255)),
  },
  { additionalProperties: false },
);
export type CreateRefundInput = Static<typeof CreateRefundBody>;

export const RefundObject = Type.Object({
  object: Type.Literal('refund'),
  id: Type.String({ description: 'rfd_…' }),
  status: Type.Enum(REFUND_STATUSES, {
    description: 'pending until the rail answers; then succeeded or failed (the money goes back).',
  }),
  amount: Type.Number({ description: 'Major units.' }),
  amount_minor: Type.Integer(),
  currency: Type.String(),
  service_transaction_id: Type.String(),
  merchant_reference: Nullable(Type.String()),
  merchant_order_id: Nullable(Type.String()),
  reason: Nullable(
    Type.String({
      description:
        'The reason given to POST /v1/refunds; "cancelled" for a cancel after payment; a dispute outcome for dispute refunds.',
    }),
  ),
  origin: Type.Enum(['api', 'cancel', 'dispute'], {
    description: 'api: POST /v1/refunds; cancel: a cancel after payment; dispute: an outcome for the buyer.',
  }),
  dispute_id: Nullable(Type.String()),
  failure_reason: Nullable(Type.String()),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ListRefundsQuery = Type.Object(
  {
    ...ListQueryBase,
    service_transaction_id: Type.Optional(Printable(64)),
    status: Type.Optional(Type.Enum(REFUND_STATUSES)),
  },
  { additionalProperties: false },
);
export type ListRefundsFilter = Static<typeof ListRefundsQuery>;
