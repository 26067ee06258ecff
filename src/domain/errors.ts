/**
 * The closed error catalogue (spec 7, resolutions 2). Every non-2xx response is one of these codes,
 * rendered by the HTTP layer as { error: { code, message, request_id, type, param? } }.
 */
export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, type: 'invalid_request', retry: 'no: fix the request first' },
  invalid_api_key: { status: 401, type: 'authentication_failed', retry: 'no: use a valid key' },
  authentication_failed: { status: 401, type: 'authentication_failed', retry: 'no: use a valid link' },
  insufficient_permissions: { status: 403, type: 'permission_denied', retry: 'no: use a key with the scope' },
  permission_denied: { status: 403, type: 'permission_denied', retry: 'no' },
  not_found: { status: 404, type: 'not_found', retry: 'no' },
  conflict: { status: 409, type: 'conflict', retry: 'only after reading the current state' },
  rate_limit_exceeded: { status: 429, type: 'rate_limited', retry: 'yes, after Retry-After seconds' },
  internal_error: { status: 500, type: 'internal_error', retry: 'yes, with the same idempotency key' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
export type ErrorType = (typeof ERROR_CATALOGUE)[ErrorCode]['type'];

export interface ApiErrorOptions {
  /** The request field at fault, dotted (customer.phone). */
  param?: string;
  /** Overrides the catalogue status where the spec names another (405, 413, 415 are invalid_request). */
  status?: number;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
    this.type = ERROR_CATALOGUE[code].type;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }
}

export function invalid(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param });
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError('not_found', `No such ${what}: '${id}'.`, { param: 'id' });
}
