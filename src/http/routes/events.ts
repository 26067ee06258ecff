import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getEventView, listEventViews, redeliverEvent } from '../../operations/events-api.ts';
import { IdParams, listOf } from '../../schemas/common.ts';
import { EventObject, ListEventsQuery, RedeliverBody } from '../../schemas/events.ts';
import { merchantOf } from '../auth.ts';
import { answers, idempotentPost, keyedRoute, replyReplayed } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const eventRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.get(
    '/v1/events',
    {
      config: { access: 'events:read' },
      schema: {
        ...keyedRoute('Events'),
        summary: 'List events (kept 30 days), newest first',
        description:
          'Filters: type, service_transaction_id, delivery_failed=true (events whose latest delivery to some target ' +
          'used up its five attempts). Each event carries its deliveries; GET /v1/events/{id} adds their attempts.',
        querystring: ListEventsQuery,
        response: answers(listOf(EventObject)),
      },
    },
    async (request) => listEventViews(ctx, merchantOf(request), request.query),
  );

  app.get(
    '/v1/events/:id',
    {
      config: { access: 'events:read' },
      schema: {
        ...keyedRoute('Events'),
        summary: 'Retrieve an event with its delivery attempts',
        params: IdParams,
        response: answers(EventObject),
      },
    },
    async (request) => getEventView(ctx, merchantOf(request), request.params.id),
  );

  app.post(
    '/v1/events/:id/redeliver',
    {
      config: { access: 'webhooks:write' },
      schema: {
        ...idempotentPost('Events'),
        summary: 'Send an event again',
        description:
          'Sends it now to its current targets with a fresh set of five attempts. A target still waiting for a retry ' +
          'is made due now instead, so repeating the call never queues the event twice.',
        params: IdParams,
        body: RedeliverBody,
        response: answers(EventObject),
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
      replyReplayed(reply, result);
      return result.event;
    },
  );
};
