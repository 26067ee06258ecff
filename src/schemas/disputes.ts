import { type Static, Type } from 'typebox';
import { ListQueryBase, Nullable, Printable, Timestamp } from './common.ts';

/** Disputes (resolutions 8): the request bodies, the dispute object and its list query. */

export const DISPUTE_REASONS = [
  'not_received',
  'not_as_described',
  'damaged',
  'unauthorized',
  'other',
] as const;
export const DISPUTE_STATUSES = ['open', 'under_review', 'resolved', 'withdrawn'] as const;
export const DISPUTE_DECISIONS = ['seller', 'buyer', 'split'] as const;

/**
 * Free text of disputes (descriptions, evidence, notes): no control characters but line breaks
 * and tabs, so a textarea's paragraphs survive and NUL never reaches the database.
 */
export const MULTILINE_PATTERN = '^(?:[^\\p{C}]|[\\t\\n\\r])+$';

const Multiline = (max: number, what: string) =>
  Type.String({
    minLength: 1,
    maxLength: max,
    pattern: MULTILINE_PATTERN,
    description: `${what}: 1 to ${max} characters, no control characters but line breaks and tabs`,
  });

const IdempotencyKeyField = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));

export const EvidenceJsonBody = Type.Object(
  {
    kind: Type.Enum(['text', 'url'], { description: 'Files are sent as multipart/form-data instead.' }),
    content: Multiline(5000, 'The text, or an absolute http(s) URL of at most 2048 characters'),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type EvidenceJsonInput = Static<typeof EvidenceJsonBody>;

/** For the OpenAPI document: a multipart body is read by the route, not by this schema. */
export const EvidenceMultipartBody = Type.Object(
  {
    file: Type.Optional(
      Type.String({
        contentMediaType: 'application/octet-stream',
        description:
          'Exactly one file part, at most 5 MiB (larger: 413). PNG, JPEG, GIF, WebP, PDF or plain UTF-8 text, ' +
          "recognised from the file's bytes; the part's Content-Type is ignored.",
      }),
    ),
    description: Type.Optional(
      Type.String({ description: 'Optional, 1 to 5000 characters: what the file shows.' }),
    ),
    idempotency_key: Type.Optional(Type.String({ description: 'Or the Idempotency-Key header.' })),
  },
  { description: 'A file upload (multipart/form-data).' },
);

export const CreateDisputeBody = Type.Object(
  {
    service_transaction_id: Printable(64, 'The transaction, reserved or delivered.'),
    reason: Type.Enum(DISPUTE_REASONS),
    description: Multiline(5000, 'What went wrong'),
    evidence: Type.Optional(
      Type.Array(
        Type.Object(
          {
            kind: Type.Enum(['text', 'url']),
            content: Multiline(5000, 'The text, or an absolute http(s) URL of at most 2048 characters'),
          },
          { additionalProperties: false },
        ),
        { maxItems: 20, description: 'Evidence added at opening (files: POST /v1/disputes/{id}/evidence).' },
      ),
    ),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);
export type CreateDisputeInput = Static<typeof CreateDisputeBody>;

const MajorAmount = (description: string) =>
  Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description });

export const ResolveDisputeBody = Type.Object(
  {
    decision: Type.Enum(DISPUTE_DECISIONS, {
      description:
        'seller: the held funds are approved for release; buyer: they are refunded; split: part each.',
    }),
    amount_to_seller: Type.Optional(
      MajorAmount('Split only, major units: the part of the held funds approved for the seller.'),
    ),
    amount_to_buyer: Type.Optional(
      MajorAmount(
        'Split only, major units: the part refunded to the buyer. Give one amount (the other is the rest ' +
          'of what is held) or both (they must add up to what is held).',
      ),
    ),
    note: Type.Optional(Multiline(2000, "The operator's reasons, shown to the merchant")),
    idempotency_key: IdempotencyKeyField,
  },
  { additionalProperties: false },
);

export const ListDisputesQuery = Type.Object(
  {
    ...ListQueryBase,
    status: Type.Optional(Type.Enum(DISPUTE_STATUSES)),
    service_transaction_id: Type.Optional(Printable(64)),
    merchant_id: Type.Optional(Printable(64, "Operator key only: one merchant's disputes.")),
    livemode: Type.Optional(Type.Boolean({ description: 'Operator key only: one environment.' })),
  },
  { additionalProperties: false },
);
export type ListDisputesFilter = Static<typeof ListDisputesQuery>;

export const EvidenceFileParams = Type.Object({
  id: Printable(64),
  evidence_id: Printable(64),
});

const EvidenceObject = Type.Object({
  id: Type.String({ description: 'evd_…' }),
  submitted_by: Type.Enum(['buyer', 'seller', 'operator']),
  kind: Type.Enum(['text', 'url', 'file']),
  content: Type.String({
    description: 'The text or URL; for a file, the API path that downloads it (…/evidence/{id}/file).',
  }),
  description: Nullable(Type.String({ description: 'Files only: the description sent with the file.' })),
  file_name: Nullable(Type.String({ description: 'Files only: the sanitised name it is served under.' })),
  content_type: Nullable(Type.String({ description: "Files only: the type read from the file's bytes." })),
  size_bytes: Nullable(Type.Integer({ description: 'Files only.' })),
  submitted_at: Timestamp,
});

const OutcomeObject = Type.Object({
  decision: Type.Enum(DISPUTE_DECISIONS),
  amount_to_seller: Type.Number({ description: 'Of the funds held when decided, major units.' }),
  amount_to_seller_minor: Type.Integer(),
  amount_to_buyer: Type.Number({ description: 'Refunded to the buyer, major units.' }),
  amount_to_buyer_minor: Type.Integer(),
  decided_at: Timestamp,
  note: Nullable(Type.String()),
});

export const DisputeObject = Type.Object({
  object: Type.Literal('dispute'),
  id: Type.String({ description: 'dsp_…' }),
  service_transaction_id: Type.String(),
  merchant_reference: Nullable(Type.String()),
  merchant_order_id: Nullable(Type.String()),
  status: Type.Enum(DISPUTE_STATUSES, {
    description:
      'open (evidence accepted until evidence_due_by) → under_review → resolved. withdrawn is reserved: no ' +
      'call makes it yet.',
  }),
  reason: Type.Enum(DISPUTE_REASONS),
  description: Type.String(),
  opened_by: Type.Enum(['buyer', 'seller', 'operator'], {
    description: 'buyer: on the buyer page; seller: by the merchant through the API.',
  }),
  amount: Type.Number({ description: "The transaction's amount, major units." }),
  amount_minor: Type.Integer(),
  currency: Type.String(),
  evidence: Type.Array(EvidenceObject, { description: 'Oldest first.' }),
  evidence_due_by: Timestamp,
  outcome: Nullable(OutcomeObject),
  livemode: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
