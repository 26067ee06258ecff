import { type Static, Type } from 'typebox';
import { CURRENCIES } from '../domain/money.ts';
import {
  RELEASE_CONDITION_TYPES,
  SETTLEMENT_STATUSES,
  TRANSACTION_STATUSES,
  VERTICALS,
} from '../domain/transaction-states.ts';
import { ListQueryBase, Nullable, PRINTABLE_PATTERN, Printable, Timestamp } from './common.ts';

const Email = Type.String({ format: 'email', maxLength: 254 });

const Customer = Type.Object(
  {
    name: Type.Optional(Printable(200)),
    phone: Type.Optional(
      Type.String({ pattern: '^\\+[0-9]{8,15}$', description: 'E.164: + then 8 to 15 digits.' }),
    ),
    email: Type.Optional(Email),
  },
  { additionalProperties: false },
);

const Seller = Type.Object(
  {
    merchant_id: Type.Optional(Printable(128, "The seller's id in the merchant's system.")),
    email: Type.Optional(Email),
    name: Type.Optional(Printable(200, 'Shown to the buyer on the checkout page.')),
  },
  { additionalProperties: false },
);

const ReviewWindowDays = Type.Integer({
  minimum: 1,
  maximum: 30,
  description: 'Review period in days (default 3).',
});

const ReleaseConditionInput = Type.Object(
  {
    type: Type.Optional(Type.Enum(RELEASE_CONDITION_TYPES)),
    review_window_days: Type.Optional(ReviewWindowDays),
    release_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'For time_based: when to release (in the future).' }),
    ),
  },
  { additionalProperties: false },
);

/** Free text that PostgreSQL can store: anything but NUL and unpaired surrogates (newlines are fine). */
const StorableText = (max: number) =>
  Type.String({
    maxLength: max,
    pattern: '^[^\\u0000\\p{Cs}]*$',
    description: `at most ${max} characters, without NUL or unpaired surrogate characters`,
  });

export const Metadata = Type.Record(Type.String(), StorableText(500), {
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 40, pattern: PRINTABLE_PATTERN },
  description: 'Up to 50 string keys of at most 40 characters; values at most 500 characters.',
});

/** POST /v1/transactions: the flat and the nested shape of spec 2.1 in one schema. */
export const CreateTransactionBody = Type.Object(
  {
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000_000,
      description: 'Major units (1500.50 KES); at most as many decimals as the currency allows.',
    }),
    title: Printable(200),
    currency: Type.Optional(
      Type.Enum(CURRENCIES, { description: "Defaults to the merchant's default currency." }),
    ),
    merchant_reference: Type.Optional(
      Printable(128, 'Unique per merchant and environment; makes create idempotent.'),
    ),
    merchant_order_id: Type.Optional(Printable(128)),
    vertical: Type.Optional(Type.Enum(VERTICALS)),
    satisfaction_days: Type.Optional(ReviewWindowDays),
    seller_email: Type.Optional(Email),
    customer: Type.Optional(Customer),
    seller: Type.Optional(Seller),
    release_condition: Type.Optional(ReleaseConditionInput),
    callback_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })),
    metadata: Type.Optional(Metadata),
    idempotency_key: Type.Optional(Printable(255)),
  },
  { additionalProperties: false },
);

export type CreateTransactionInput = Static<typeof CreateTransactionBody>;

export const TransactionObject = Type.Object({
  object: Type.Literal('transaction'),
  service_transaction_id: Type.String(),
  merchant_reference: Nullable(Type.String()),
  merchant_order_id: Nullable(Type.String()),
  status: Type.Enum(TRANSACTION_STATUSES),
  settlement_status: Type.Enum(SETTLEMENT_STATUSES),
  amount: Type.Number({ description: 'Major units.' }),
  amount_minor: Type.Integer({ description: 'Minor units.' }),
  currency: Type.String(),
  title: Type.String(),
  vertical: Type.String(),
  customer: Nullable(
    Type.Object({
      name: Nullable(Type.String()),
      phone: Nullable(Type.String()),
      email: Nullable(Type.String()),
    }),
  ),
  seller: Nullable(
    Type.Object({
      merchant_id: Nullable(Type.String()),
      email: Nullable(Type.String()),
      name: Nullable(Type.String()),
    }),
  ),
  release_condition: Type.Object({
    type: Type.String(),
    review_window_days: Type.Integer(),
    release_at: Nullable(Timestamp),
  }),
  review_deadline: Nullable(Timestamp),
  payment_link: Type.String({ description: 'Share-safe checkout URL for the buyer.' }),
  buyer_link: Type.String({
    description:
      "The buyer's page (confirm receipt); give it to the buyer only. E-mailed to customer.email when mail is configured.",
  }),
  payment_method: Nullable(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  last_payment_attempt: Nullable(
    Type.Object(
      {
        id: Type.String(),
        method: Type.String(),
        status: Type.Enum(['pending', 'requires_action', 'succeeded', 'failed']),
        instrument_last4: Type.String({ description: 'Last four digits of the phone or card.' }),
        failure_code: Nullable(Type.String()),
        failure_message: Nullable(Type.String()),
        created_at: Timestamp,
      },
      { description: 'The latest try to pay; failed, cancelled and timed-out tries stay visible here.' },
    ),
  ),
  amount_released: Type.Number(),
  amount_refunded: Type.Number(),
  callback_url: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type TransactionView = Static<typeof TransactionObject>;

export const ListTransactionsQuery = Type.Object(
  {
    ...ListQueryBase,
    status: Type.Optional(Type.Enum(TRANSACTION_STATUSES)),
    merchant_reference: Type.Optional(Printable(128)),
    merchant_order_id: Type.Optional(Printable(128)),
    'created[gte]': Type.Optional(Type.String({ format: 'date-time' })),
    'created[lt]': Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export type ListTransactionsFilter = Static<typeof ListTransactionsQuery>;
