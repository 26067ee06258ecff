import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
} from '../../operations/webhook-endpoints.ts';
import { rotateWebhookSecret } from '../../operations/webhook-secret.ts';
import { egressRanges, listCallbackTargetViews } from '../../operations/webhook-targets.ts';
import { IdempotencyHeaders, IdParams, keyedErrorResponses, listOf } from '../../schemas/common.ts';
import {
  CallbackTargetObject,
  CreatedWebhookEndpointObject,
  CreateWebhookEndpointBody,
  DeletedWebhookEndpointObject,
  EgressRangesObject,
  ListWebhookEndpointsQuery,
  RotateSecretBody,
  UpdateWebhookEndpointBody,
  WebhookEndpointObject,
  WebhookSecretObject,
} from '../../schemas/webhooks.ts';
import { merchantOf } from '../auth.ts';
import type { RouteDeps } from './deps.ts';

const TAGS = ['Webhooks'];
const security = [{ bearerAuth: [] }];

export const webhookRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/webhook_endpoints',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Create a webhook endpoint',
        description:
          "201 with the endpoint and the environment's signing secret (secret, shown here and on rotation only). " +
          "The endpoint receives every event of the environment whose type is in enabled_events (default ['*']).",
        security,
        headers: IdempotencyHeaders,
        body: CreateWebhookEndpointBody,
        response: {
          200: CreatedWebhookEndpointObject,
          201: CreatedWebhookEndpointObject,
          ...keyedErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const result = await createWebhookEndpoint(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(result.replayed ? 200 : 201).send(result.endpoint);
    },
  );

  app.get(
    '/v1/webhook_endpoints',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'List webhook endpoints, newest first',
        security,
        querystring: ListWebhookEndpointsQuery,
        response: { 200: listOf(WebhookEndpointObject), ...keyedErrorResponses },
      },
    },
    async (request) => listWebhookEndpoints(ctx, merchantOf(request), request.query),
  );

  app.get(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Retrieve a webhook endpoint',
        security,
        params: IdParams,
        response: { 200: WebhookEndpointObject, ...keyedErrorResponses },
      },
    },
    async (request) => getWebhookEndpoint(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Update a webhook endpoint',
        description:
          'Change url, enabled_events or description; disabled: true stops deliveries (pending ones are cancelled), false resumes them.',
        security,
        params: IdParams,
        headers: IdempotencyHeaders,
        body: UpdateWebhookEndpointBody,
        response: { 200: WebhookEndpointObject, ...keyedErrorResponses },
      },
    },
    async (request, reply) => {
      const result = await updateWebhookEndpoint(
        ctx,
        merchantOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.endpoint;
    },
  );

  app.delete(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook endpoint',
        description:
          'No more deliveries to it; its pending deliveries are cancelled. Its past attempts stay visible on the events.',
        security,
        params: IdParams,
        response: { 200: DeletedWebhookEndpointObject, ...keyedErrorResponses },
      },
    },
    async (request) => deleteWebhookEndpoint(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/webhook_secret/rotate',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: "Rotate the environment's signing secret",
        description:
          'One secret (whsec_…) signs every webhook of the environment, to endpoints and callback URLs. The new one is ' +
          'returned once and signs every attempt sent from now on; the old one stops at once.',
        security,
        headers: IdempotencyHeaders,
        body: RotateSecretBody,
        response: { 200: WebhookSecretObject, ...keyedErrorResponses },
      },
    },
    async (request, reply) => {
      const result = await rotateWebhookSecret(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.secret;
    },
  );

  app.get(
    '/v1/webhook_callback_targets',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Failing state of callback URLs, per origin',
        description:
          "A transaction's callback_url has no endpoint object: its failing flag and last alert are kept per origin " +
          '(scheme, host and port) and shown here, failing ones first.',
        security,
        response: { 200: listOf(CallbackTargetObject), ...keyedErrorResponses },
      },
    },
    async (request) => listCallbackTargetViews(ctx, merchantOf(request)),
  );

  app.get(
    '/v1/webhook_egress_ranges',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'The address ranges webhooks are sent from',
        description: 'For an optional allowlist on the receiver (spec 6.2).',
        security,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: EgressRangesObject, ...keyedErrorResponses },
      },
    },
    async () => egressRanges(ctx),
  );
};
