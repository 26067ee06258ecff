import { Ajv, type ErrorObject } from 'ajv';
import { default as addFormatsModule } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../domain/errors.ts';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const PRINTABLE_PATTERN = '^[^\\p{C}]+$';

/** Bodies are strict: no type coercion, no silently dropped fields (resolutions 1). */
const bodyAjv = addFormats(
  new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, verbose: true }),
);
/** Query strings and path parameters arrive as text, so numbers there are coerced. */
const textAjv = addFormats(
  new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true, verbose: true }),
);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema);

function dotted(instancePath: string): string {
  return instancePath.split('/').filter(Boolean).join('.');
}

/** One readable sentence and the dotted field name for the first validation failure. */
export function describeValidationError(
  error: ErrorObject,
  part: string,
): { param: string | undefined; message: string } {
  const base = dotted(error.instancePath);
  const join = (child: string) => (base ? `${base}.${child}` : child);
  const params = error.params as Record<string, unknown>;
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const param = join(String(params.missingProperty));
      return { param, message: `${param} is required.` };
    }
    case 'additionalProperties': {
      const param = join(String(params.additionalProperty));
      return { param, message: `Unknown field '${param}'${part === 'body' ? '' : ` in the ${part}`}.` };
    }
    case 'propertyNames': {
      return {
        param: base || undefined,
        message: `${base || 'object'} has a key that is empty or longer than allowed.`,
      };
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).join(', ');
      return { param: base, message: `${base} must be one of: ${allowed}.` };
    }
    case 'pattern': {
      const hint =
        schema.pattern === PRINTABLE_PATTERN
          ? 'must not contain control characters'
          : `is not valid${schema.description ? ` (${String(schema.description).replace(/\.$/, '')})` : ''}`;
      return { param: base, message: `${base} ${hint}.` };
    }
    case 'format':
      return { param: base, message: `${base} must be a valid ${String(params.format)}.` };
    case 'type':
      if (!base)
        return { param: undefined, message: `The request ${part} must be a JSON ${String(params.type)}.` };
      return { param: base, message: `${base} must be of type ${String(params.type)}.` };
    default:
      return {
        param: base || undefined,
        message: `${base || `The request ${part}`} ${error.message ?? 'is invalid'}.`,
      };
  }
}

export function validationApiError(errors: ErrorObject[], part: string): ApiError {
  const first = errors[0];
  if (!first) return new ApiError('invalid_request', 'The request is invalid.');
  const { param, message } = describeValidationError(first, part);
  return new ApiError('invalid_request', message, param ? { param } : {});
}
