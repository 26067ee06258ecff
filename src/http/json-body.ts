import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from '../domain/errors.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * JSON is the only body type (415 otherwise). Malformed JSON and prototype-poisoning keys are
 * 400; an empty body on a POST reads as {} so body-less actions (confirm, cancel) need no '{}'.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, {});
      try {
        done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch {
        done(new ApiError('invalid_request', 'The request body is not valid JSON.'), undefined);
      }
    },
  );
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {};
  });
}
