import { type TSchema, Type } from 'typebox';

/** Schemas shared by every resource: the error envelope, list envelopes, timestamps, ids. */

/**
 * Text with no control, format, private-use or unpaired-surrogate characters (Unicode class C).
 * Besides keeping titles and references clean, this keeps out NUL and lone surrogates, which
 * PostgreSQL cannot store in text or jsonb.
 */
export const PRINTABLE_PATTERN = '^[^\\p{C}]+$';

/** One printable string of 1..max characters. */
export const Printable = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: PRINTABLE_PATTERN, description });

export const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:15:30.123Z',
});

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'Machine-readable code (spec 7, set B where it applies, else set A).' }),
    message: Type.String(),
    request_id: Type.String({
      description: 'Also in the X-Request-Id header; quote it when reporting an issue.',
    }),
    type: Type.String({ description: 'The set A category of the code.' }),
    param: Type.Optional(Type.String({ description: 'The request field at fault, dotted.' })),
  }),
});

export const IdParams = Type.Object({ id: Printable(64) });

export const ListQueryBase = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  starting_after: Type.Optional(Printable(64, 'An id: the page after it.')),
  ending_before: Type.Optional(Printable(64, 'An id: the page before it.')),
};

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    has_more: Type.Boolean(),
  });

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Printable(255)),
});

/** The error responses every keyed route can give, for the OpenAPI document. */
export const keyedErrorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
};
