import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, invalid } from '../domain/errors.ts';
import { fileTooLarge } from '../operations/dispute-evidence.ts';
import { MAX_EVIDENCE_FILE_BYTES } from '../operations/dispute-file-types.ts';

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

/** One uploaded file as read from a multipart form, bytes in memory (at most the file limit). */
export interface UploadedFile {
  fileName: string;
  data: Buffer;
}

export interface MultipartForm {
  fields: Record<string, string>;
  file: UploadedFile | undefined;
}

const MULTIPART_LIMITS = {
  // One byte over the limit is enough to know the file is too large (busboy truncates there).
  fileSize: MAX_EVIDENCE_FILE_BYTES,
  files: 1,
  fields: 8,
  parts: 10,
  // A 5,000-character text is at most 20,000 bytes of UTF-8.
  fieldSize: 20_000,
  fieldNameSize: 100,
};

/**
 * multipart/form-data for the routes that take an uploaded file (dispute evidence, the buyer's
 * dispute forms), registered in their own plugin so every other route still refuses it (415).
 */
export async function installMultipart(app: FastifyInstance): Promise<void> {
  await app.register(fastifyMultipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: true });
}

function multipartError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return fileTooLarge();
  if (code === 'FST_FILES_LIMIT') return invalid('file', 'Send one file per request.');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ApiError('invalid_request', 'The form has too many fields.');
  }
  if (code === 'FST_PROTO_VIOLATION')
    return new ApiError('invalid_request', 'The form has a forbidden field name.');
  return new ApiError('invalid_request', 'The multipart/form-data body could not be read.');
}

/**
 * Reads a multipart form: the named text fields and at most one file part named `file`. Any other
 * field is 400 (strict input, as for JSON), a file over the limit 413, a malformed body 400.
 */
export async function readMultipartForm(
  request: FastifyRequest,
  allowedFields: readonly string[],
): Promise<MultipartForm> {
  const fields: Record<string, string> = Object.create(null);
  let file: UploadedFile | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          await part.toBuffer().catch(() => undefined);
          throw invalid(part.fieldname, `Unknown file field '${part.fieldname}'; send the file as 'file'.`);
        }
        file = { fileName: part.filename, data: await part.toBuffer() };
        continue;
      }
      if (!allowedFields.includes(part.fieldname)) {
        throw invalid(part.fieldname, `Unknown field '${part.fieldname}'.`);
      }
      if (part.valueTruncated) throw invalid(part.fieldname, `${part.fieldname} is too long.`);
      if (part.fieldname in fields) throw invalid(part.fieldname, `${part.fieldname} is given twice.`);
      fields[part.fieldname] = String(part.value);
    }
  } catch (error) {
    throw multipartError(error);
  }
  return { fields, file };
}
