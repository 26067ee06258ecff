import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { validationApiError } from './validation.ts';

/** The whole message of every 500: what failed is logged with the request id, never sent. */
const INTERNAL_MESSAGE = 'Something went wrong on our side. Quote the request_id if you contact support.';

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).send({
    error: {
      code: error.code,
      message: error.message,
      request_id: String(request.id),
      type: error.type,
      ...(error.param ? { param: error.param } : {}),
    },
  });
}

/** Maps Fastify's own failures (parsing, limits, validation) into the catalogue. */
function toApiError(error: FastifyError): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error.validation)
    return validationApiError(error.validation as never, error.validationContext ?? 'body');
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request', 'Send JSON with the header Content-Type: application/json.', {
        status: 415,
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request', 'The request body is larger than 1 MiB.', { status: 413 });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', 'The URL is not valid: it holds a malformed %-escape.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('invalid_request', 'A path segment of the URL is longer than 100 characters.');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', 'The request could not be read.', { status: error.statusCode });
  }
  return undefined;
}

/**
 * Failures the router meets before any hook runs (an undecodable URL, an over-long path segment):
 * Fastify would answer them in its own format, so they are passed here through `frameworkErrors`.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.header('X-Request-Id', request.id);
  const known = toApiError(error);
  if (!known) request.log.error({ err: error }, 'unexpected router error');
  sendError(reply, request, known ?? new ApiError('internal_error', INTERNAL_MESSAGE));
}

export function installErrorHandling(app: FastifyInstance, methodsForPath: (path: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toApiError(error);
    if (known) return sendError(reply, request, known);
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, request, new ApiError('internal_error', INTERNAL_MESSAGE));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = methodsForPath(path);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(
        reply,
        request,
        new ApiError(
          'invalid_request',
          `${request.method} is not allowed on ${path}. Allowed: ${allowed.join(', ')}.`,
          {
            status: 405,
          },
        ),
      );
    }
    return sendError(reply, request, new ApiError('not_found', `No route ${request.method} ${path}.`));
  });
}
