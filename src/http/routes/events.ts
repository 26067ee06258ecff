import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getEventView, listEventViews, redeliverEvent } from '../../operations/events-api.ts';
import { IdempotencyHeaders, IdParams, keyedErrorResponses, listOf } from '../../schemas/common.ts';
import { EventObject, ListEventsQuery, RedeliverBody } from '../../schemas/events.ts';
import { merchantOf } from '../auth.ts';
import type { RouteDeps } from './deps.ts';

const TAGS = ['Events'];
const security = [{ bearerAuth: [] }];

export const eventRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.get(
    '/v1/events',
    {
      config: { access: 'events:read' },
      schema: {
        tags: TAGS,
        summary: 'List events (kept 30 days), newest first',
        description:
          'Filters: type, service_transaction_id, delivery_failed=true (events whose latest delivery to some target ' +
          'used up its five attempts). Each event carries its deliveries; GET /v1/events/{id} adds their attempts.',
        security,
        querystring: ListEventsQuery,
        response: { 200: listOf(EventObject), ...keyedErrorResponses },
      },
    },
    async (request) => listEventViews(ctx, merchantOf(request), request.query),
  );

  app.get(
    '/v1/events/:id',
    {
      config: { access: 'events:read' },
      schema: {
        tags: TAGS,
        summary: 'Retrieve an event with its delivery attempts',
        security,
        params: IdParams,
        response: { 200: EventObject, ...keyedErrorResponses },
      },
    },
    async (request) => getEventView(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/events/:id/redeliver',
    {
      config: { access: 'webhooks:write' },
      schema: {
        tags: TAGS,
        summary: 'Send an event again',
        description:
          'Sends it now to its current targets with a fresh set of five attempts. A target still waiting for a retry ' +
          'is made due now instead, so repeating the call never queues the event twice.',
        security,
        params: IdParams,
        headers: IdempotencyHeaders,
        body: RedeliverBody,
        response: { 200: EventObject, ...keyedErrorResponses },
      },
    },
    async (request, reply) => {
      const result = await redeliverEvent(
        ctx,
        merchantOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.event;
    },
  );
};
