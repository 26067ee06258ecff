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
import { IdParams, listOf } from '../../schemas/common.ts';
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
import {
  answers,
  createdAnswers,
  idempotentPost,
  keyedRoute,
  replyCreated,
  replyReplayed,
} from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const webhookRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/webhook_endpoints',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...idempotentPost('Webhooks'),
        summary: 'Create a webhook endpoint',
        description:
          "201 with the endpoint and the environment's signing secret (secret, shown here and on rotation only). " +
          "The endpoint receives every event of the environment whose type is in enabled_events (default ['*']).",
        body: CreateWebhookEndpointBody,
        response: createdAnswers(CreatedWebhookEndpointObject),
      },
    },
    async (request, reply) => {
      const result = await createWebhookEndpoint(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyCreated(reply, result);
      return result.endpoint;
    },
  );

  app.get(
    '/v1/webhook_endpoints',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...keyedRoute('Webhooks'),
        summary: 'List webhook endpoints, newest first',
        querystring: ListWebhookEndpointsQuery,
        response: answers(listOf(WebhookEndpointObject)),
      },
    },
    async (request) => listWebhookEndpoints(ctx, merchantOf(request), request.query),
  );

  app.get(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...keyedRoute('Webhooks'),
        summary: 'Retrieve a webhook endpoint',
        params: IdParams,
        response: answers(WebhookEndpointObject),
      },
    },
    async (request) => getWebhookEndpoint(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...idempotentPost('Webhooks'),
        summary: 'Update a webhook endpoint',
        description:
          'Change url, enabled_events or description; disabled: true stops deliveries (pending ones are cancelled), false resumes them.',
        params: IdParams,
        body: UpdateWebhookEndpointBody,
        response: answers(WebhookEndpointObject),
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
      replyReplayed(reply, result);
      return result.endpoint;
    },
  );

  app.delete(
    '/v1/webhook_endpoints/:id',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...keyedRoute('Webhooks'),
        summary: 'Delete a webhook endpoint',
        description:
          'No more deliveries to it; its pending deliveries are cancelled. Its past attempts stay visible on the events.',
        params: IdParams,
        response: answers(DeletedWebhookEndpointObject),
      },
    },
    async (request) => deleteWebhookEndpoint(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/webhook_secret/rotate',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...idempotentPost('Webhooks'),
        summary: "Rotate the environment's signing secret",
        description:
          'One secret (whsec_…) signs every webhook of the environment, to endpoints and callback URLs. The new one is ' +
          'returned once and signs every attempt sent from now on; the old one stops at once.',
        body: RotateSecretBody,
        response: answers(WebhookSecretObject),
      },
    },
    async (request, reply) => {
      const result = await rotateWebhookSecret(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyReplayed(reply, result);
      return result.secret;
    },
  );

  app.get(
    '/v1/webhook_callback_targets',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...keyedRoute('Webhooks'),
        summary: 'Failing state of callback URLs, per origin',
        description:
          "A transaction's callback_url has no endpoint object: its failing flag and last alert are kept per origin " +
          '(scheme, host and port) and shown here, failing ones first.',
        response: answers(listOf(CallbackTargetObject)),
      },
    },
    async (request) => listCallbackTargetViews(ctx, merchantOf(request)),
  );

  app.get(
    '/v1/webhook_egress_ranges',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...keyedRoute('Webhooks'),
        summary: 'The address ranges webhooks are sent from',
        description: 'For an optional allowlist on the receiver (spec 6.2).',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: answers(EgressRangesObject),
      },
    },
    async () => egressRanges(ctx),
  );
};
