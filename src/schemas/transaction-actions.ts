import { type Static, Type } from 'typebox';
import { Timestamp } from './common.ts';

const IdempotencyKeyField = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));

/** deliver, confirm and cancel take no fields but an optional idempotency key. */
export const TransitionBody = Type.Object(
  { idempotency_key: IdempotencyKeyField },
  { additionalProperties: false },
);

export const ReleaseBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1_000_000_000,
        description:
          'Major units. Below what is held: a partial release; the rest stays held. Default: all of it.',
      }),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);

export const CreatePaymentLinkBody = Type.Object(
  {
    service_transaction_id: Type.String({ minLength: 1, maxLength: 64 }),
    expires_in_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 604_800, description: 'Default: the payment window (24 h).' }),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type CreatePaymentLinkInput = Static<typeof CreatePaymentLinkBody>;

export const PaymentLinkObject = Type.Object({
  object: Type.Literal('payment_link'),
  id: Type.String(),
  url: Type.String({ description: 'Share-safe: holds only a random token.' }),
  service_transaction_id: Type.String(),
  expires_at: Timestamp,
  status: Type.Enum(['active', 'expired', 'completed'], {
    description: 'completed once the transaction is paid or closed.',
  }),
  livemode: Type.Boolean(),
  created_at: Timestamp,
});

export const TestPayBody = Type.Object(
  {
    method: Type.Enum(['mobile_money', 'card']),
    phone: Type.Optional(
      Type.String({
        pattern: '^\\+[0-9]{8,15}$',
        description: 'E.164; the last four digits choose the outcome.',
      }),
    ),
    card_number: Type.Optional(
      Type.String({ pattern: '^[0-9]{12,19}$', description: 'A test card number.' }),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type TestPayInput = Static<typeof TestPayBody>;

export const ClockAdvanceBody = Type.Object(
  {
    seconds: Type.Integer({
      minimum: 1,
      maximum: 31_536_000,
      description: 'How far to move the test clock.',
    }),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);

export const TestClockObject = Type.Object({
  object: Type.Literal('test_clock'),
  now: Timestamp,
  offset_seconds: Type.Number({ description: "How far the merchant's test clock is ahead of real time." }),
  jobs_run: Type.Integer({ description: 'Pieces of due work that ran before this answer.' }),
});
