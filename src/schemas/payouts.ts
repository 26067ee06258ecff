import { type Static, Type } from 'typebox';
import { ListQueryBase, Nullable, Timestamp } from './common.ts';

const IdempotencyKeyField = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));

/** Formats of a payout destination, shared by the API schema and the CLI's checks. */
export const PAYOUT_PHONE_PATTERN = '^\\+[0-9]{8,15}$';
export const BANK_CODE_PATTERN = '^[A-Za-z0-9]{2,11}$';
export const ACCOUNT_NUMBER_PATTERN = '^[A-Za-z0-9]{4,34}$';

export const PAYOUT_STATUSES = ['pending', 'in_transit', 'paid', 'failed', 'reversed'] as const;
export const PAYOUT_SCHEDULES = ['instant', 'daily'] as const;
const Method = Type.Enum(['mobile_money', 'bank_transfer']);

/**
 * One object for both methods: which fields a method needs is checked by the operation, so a
 * missing or misplaced field is a 400 naming that field (a union would name none).
 */
export const PayoutSettingsBody = Type.Object(
  {
    method: Method,
    phone: Type.Optional(
      Type.String({
        pattern: PAYOUT_PHONE_PATTERN,
        description: 'mobile_money: the E.164 number paid by B2C (+ then 8 to 15 digits).',
      }),
    ),
    bank_code: Type.Optional(
      Type.String({
        pattern: BANK_CODE_PATTERN,
        description:
          "bank_transfer: the bank's code (a local bank code or a SWIFT/BIC), 2 to 11 letters or digits.",
      }),
    ),
    account_number: Type.Optional(
      Type.String({
        pattern: ACCOUNT_NUMBER_PATTERN,
        description: 'bank_transfer: the account number (or IBAN), 4 to 34 letters or digits.',
      }),
    ),
    schedule: Type.Optional(
      Type.Enum(PAYOUT_SCHEDULES, {
        description: 'instant: a payout as soon as funds are approved; daily (default): at midnight UTC.',
      }),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type PayoutSettingsInput = Static<typeof PayoutSettingsBody>;

export const PayoutSettingsObject = Type.Object({
  object: Type.Literal('payout_settings'),
  method: Nullable(Method),
  destination: Nullable(Type.String({ description: 'Masked: the last four digits only.' })),
  bank_code: Nullable(Type.String()),
  schedule: Type.Enum(PAYOUT_SCHEDULES),
  simulated: Type.Boolean({
    description:
      'True in test mode until settings are saved: payouts go to the simulated M-Pesa number +254700000000.',
  }),
  livemode: Type.Boolean(),
  updated_at: Nullable(Timestamp),
});
export type PayoutSettingsView = Static<typeof PayoutSettingsObject>;

export const PayoutLineObject = Type.Object({
  service_transaction_id: Type.String(),
  merchant_reference: Nullable(Type.String()),
  merchant_order_id: Nullable(Type.String()),
  amount: Type.Number({ description: 'Major units.' }),
  amount_minor: Type.Integer(),
});
export type PayoutLineView = Static<typeof PayoutLineObject>;

export const PayoutObject = Type.Object({
  object: Type.Literal('payout'),
  id: Type.String(),
  status: Type.Enum(PAYOUT_STATUSES),
  method: Method,
  destination: Type.String({ description: 'Masked: the last four digits only.' }),
  amount: Type.Number({ description: 'Major units.' }),
  amount_minor: Type.Integer(),
  currency: Type.String(),
  line_count: Type.Integer(),
  lines: Type.Array(PayoutLineObject, {
    description:
      'The first lines, newest transaction first: 1,000 on GET /v1/payouts/{id}, 100 in lists and events. ' +
      'All of them: GET /v1/payouts/{id}/lines.',
  }),
  lines_has_more: Type.Boolean({ description: 'True when the payout has more lines than shown here.' }),
  created_at: Timestamp,
  paid_at: Nullable(Timestamp),
  failure_reason: Nullable(Type.String()),
  livemode: Type.Boolean(),
});
export type PayoutView = Static<typeof PayoutObject>;

export const ListPayoutsQuery = Type.Object(
  {
    ...ListQueryBase,
    status: Type.Optional(Type.Enum(PAYOUT_STATUSES)),
    'created[gte]': Type.Optional(Type.String({ format: 'date-time' })),
    'created[lt]': Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export type ListPayoutsFilter = Static<typeof ListPayoutsQuery>;

export const PayoutLinesQuery = Type.Object(
  {
    ...ListQueryBase,
  },
  { additionalProperties: false },
);
export type PayoutLinesFilter = Static<typeof PayoutLinesQuery>;

export const ReversePayoutBody = Type.Object(
  { idempotency_key: IdempotencyKeyField },
  { additionalProperties: false },
);
