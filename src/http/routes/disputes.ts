import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../domain/errors.ts';
import {
  evidenceFileFor,
  getDispute,
  listDisputeViews,
  submitEvidence,
} from '../../operations/dispute-api.ts';
import type { EvidenceInput } from '../../operations/dispute-evidence.ts';
import { evidenceFileHeaders } from '../../operations/dispute-evidence.ts';
import { createDispute } from '../../operations/dispute-open.ts';
import { resolveDispute } from '../../operations/dispute-resolve.ts';
import { idempotencyKeyOf } from '../../operations/idempotent.ts';
import { ErrorEnvelope, IdParams, keyedErrorResponses, listOf } from '../../schemas/common.ts';
import {
  CreateDisputeBody,
  DisputeObject,
  EvidenceFileParams,
  EvidenceJsonBody,
  type EvidenceJsonInput,
  EvidenceMultipartBody,
  ListDisputesQuery,
  ResolveDisputeBody,
} from '../../schemas/disputes.ts';
import { installMultipart, readMultipartForm } from '../../web/form-body.ts';
import { merchantOf, principalOf } from '../auth.ts';
import {
  answers,
  createdAnswers,
  idempotentPost,
  keyedRoute,
  replyCreated,
  replyReplayed,
} from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

/** The evidence of one request: a JSON body (text or URL) or a multipart form with one file. */
async function evidenceOf(request: FastifyRequest): Promise<{ evidence: EvidenceInput; bodyKey?: string }> {
  if (request.isMultipart()) {
    const { fields, file } = await readMultipartForm(request, ['description', 'idempotency_key']);
    if (!file) throw invalid('file', "file is required: send the upload as a part named 'file'.");
    const { description, idempotency_key: bodyKey } = fields;
    return { evidence: { kind: 'file', fileName: file.fileName, data: file.data, description }, bodyKey };
  }
  // A JSON body was validated by its schema; a body-less request reaches here as {}.
  const body = request.body as Partial<EvidenceJsonInput>;
  if (body.kind === undefined || body.content === undefined) {
    throw invalid(
      body.kind === undefined ? 'kind' : 'content',
      `${body.kind === undefined ? 'kind' : 'content'} is required.`,
    );
  }
  return { evidence: { kind: body.kind, content: body.content }, bodyKey: body.idempotency_key };
}

export const disputeRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/disputes',
    {
      config: { access: 'disputes:write' },
      schema: {
        ...idempotentPost('Disputes'),
        summary: 'Open a dispute',
        description:
          'Opens a dispute on a reserved or delivered transaction (→ disputed / under_review; its auto-release ' +
          'is frozen). opened_by is seller (the merchant side). The parties have until evidence_due_by (opened + 7 ' +
          'days) to add evidence; then the case goes under review. Any other transaction state, or a dispute ' +
          'already open, is 409. Idempotent with a key: 201 first, 200 with Idempotent-Replayed on a repeat.',
        body: CreateDisputeBody,
        response: createdAnswers(DisputeObject),
      },
    },
    async (request, reply) => {
      const result = await createDispute(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyCreated(reply, result);
      return result.dispute;
    },
  );

  app.get(
    '/v1/disputes/:id',
    {
      config: { access: 'disputes:read', operatorToo: true },
      schema: {
        ...keyedRoute('Disputes'),
        summary: 'Retrieve a dispute with its evidence',
        description: "A merchant key sees its own environment's disputes; the operator's key every dispute.",
        params: IdParams,
        response: answers(DisputeObject),
      },
    },
    async (request) => getDispute(ctx, principalOf(request), request.params.id),
  );

  app.get(
    '/v1/disputes',
    {
      config: { access: 'disputes:read', operatorToo: true },
      schema: {
        ...keyedRoute('Disputes'),
        summary: 'List disputes, newest first',
        description:
          "Filters: status, service_transaction_id. A merchant key lists its own environment's disputes; the " +
          "operator's key lists every merchant's in both environments, and may narrow them with merchant_id " +
          'and livemode (a merchant key giving those is 400).',
        querystring: ListDisputesQuery,
        response: answers(listOf(DisputeObject)),
      },
    },
    async (request) => listDisputeViews(ctx, principalOf(request), request.query),
  );

  app.post(
    '/v1/disputes/:id/resolve',
    {
      config: { access: 'operator' },
      schema: {
        ...idempotentPost('Disputes'),
        summary: 'Resolve a dispute (operator key only)',
        description:
          "The outcome is the operator's: a merchant key gets 403 permission_denied. seller: all that is held is " +
          'approved for release (confirmed / approved_for_release, then paid out). buyer: it is refunded ' +
          '(refunded / refund_pending, then refunded when the rail pays). split: amount_to_seller is approved and ' +
          'the rest refunded; give amount_to_seller or amount_to_buyer (the other is the rest) or both adding up ' +
          'to what is held, each above 0. A decided dispute is 409. Idempotent with a key.',
        params: IdParams,
        body: ResolveDisputeBody,
        response: answers(DisputeObject),
      },
    },
    async (request, reply) => {
      const result = await resolveDispute(
        ctx,
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      replyReplayed(reply, result);
      return result.dispute;
    },
  );

  app.get(
    '/v1/disputes/:id/evidence/:evidence_id/file',
    {
      config: { access: 'disputes:read', operatorToo: true },
      schema: {
        ...keyedRoute('Disputes'),
        summary: 'Download an evidence file',
        description:
          "To the dispute's merchant (same environment) and the operator; anyone else gets 404. Served as an " +
          "attachment with the type read from the file's bytes when it was uploaded, X-Content-Type-Options: " +
          "nosniff, Content-Security-Policy: default-src 'none'; sandbox, and Cache-Control: private, no-store.",
        params: EvidenceFileParams,
        response: {
          200: {
            description:
              'The file (image/png, image/jpeg, image/gif, image/webp, application/pdf or text/plain).',
            content: {
              'application/octet-stream': {
                schema: { type: 'string', contentMediaType: 'application/octet-stream' },
              },
            },
          },
          ...keyedErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const file = await evidenceFileFor(
        ctx,
        principalOf(request),
        request.params.id,
        request.params.evidence_id,
      );
      // The body is the file, not JSON: the reply is typed by the error schemas alone.
      return (reply as FastifyReply).headers(evidenceFileHeaders(file)).send(file.data);
    },
  );

  // The one API route that takes multipart/form-data besides JSON: multipart is registered here only.
  await app.register(async (uploads) => {
    await installMultipart(uploads);
    uploads.post(
      '/v1/disputes/:id/evidence',
      {
        config: { access: 'disputes:write', operatorToo: true },
        schema: {
          ...idempotentPost('Disputes'),
          summary: 'Add evidence',
          description:
            'JSON { kind: text | url, content } (a URL must be absolute http or https), or multipart/form-data ' +
            "with one part named 'file' (at most 5 MiB, else 413; PNG, JPEG, GIF, WebP, PDF or plain UTF-8 text, " +
            "read from the file's bytes, the client's content type is ignored; others 400 param file) and an " +
            "optional 'description'. A merchant key adds the seller's evidence while the dispute is open and " +
            "before evidence_due_by (else 409); the operator's key adds the operator's until the dispute is " +
            'resolved. Emits dispute.updated and answers 200 with the dispute. Idempotent with a key.',
          params: IdParams,
          body: {
            content: {
              'application/json': { schema: EvidenceJsonBody },
              'multipart/form-data': { schema: EvidenceMultipartBody },
            },
          },
          response: { ...answers(DisputeObject), 413: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        const { evidence, bodyKey } = await evidenceOf(request);
        const key = idempotencyKeyOf(request.headers['idempotency-key'] as string | undefined, bodyKey);
        const result = await submitEvidence(
          ctx,
          principalOf(request),
          (request.params as { id: string }).id,
          evidence,
          key,
        );
        replyReplayed(reply, result);
        return result.dispute;
      },
    );
  });
};
