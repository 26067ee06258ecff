import type { FastifyInstance } from 'fastify';

const FORM_LIMIT_BYTES = 16 * 1024;

/** Plain HTML form posts (application/x-www-form-urlencoded), for the web routes only. */
export function installFormBody(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => {
      const fields: Record<string, string> = Object.create(null);
      for (const [name, value] of new URLSearchParams(
        typeof body === 'string' ? body : body.toString('utf8'),
      )) {
        fields[name] = value;
      }
      done(null, fields);
    },
  );
}

/** A posted form's fields as strings (JSON bodies with string values are read the same way). */
export function formFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = Object.create(null);
  if (body === null || typeof body !== 'object') return fields;
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') fields[name] = value;
  }
  return fields;
}
