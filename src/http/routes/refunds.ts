import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createRefund, getRefund, listRefundViews } from '../../operations/refunds-api.ts';
import { IdParams, listOf } from '../../schemas/common.ts';
import { CreateRefundBody, ListRefundsQuery, RefundObject } from '../../schemas/refunds.ts';
import { merchantOf } from '../auth.ts';
import { answers, createdAnswers, idempotentPost, keyedRoute, replyCreated } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const refundRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/refunds',
    {
      config: { access: 'refunds:write' },
      schema: {
        ...idempotentPost('Refunds'),
        summary: 'Refund a transaction, fully or in part',
        description:
          'Full by default (everything refundable); partial with amount. Held funds (reserved, delivered) come ' +
          'back from escrow; paid-out funds (released) from the merchant’s balance, only within ' +
          'refunds_after_release_days (default 30) of release. Answers 201 with a pending refund; the rail’s ' +
          'answer makes it succeeded or failed (events refund.succeeded, refund.failed). Other states: 409. ' +
          'Idempotent with a key (200 and Idempotent-Replayed: true on a repeat).',
        body: CreateRefundBody,
        response: createdAnswers(RefundObject),
      },
    },
    async (request, reply) => {
      const result = await createRefund(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyCreated(reply, result);
      return result.refund;
    },
  );

  app.get(
    '/v1/refunds/:id',
    {
      // No refunds:read scope: refunds are read with the transactions they belong to.
      config: { access: 'transactions:read' },
      schema: {
        ...keyedRoute('Refunds'),
        summary: 'Retrieve a refund',
        params: IdParams,
        response: answers(RefundObject),
      },
    },
    async (request) => getRefund(ctx, merchantOf(request), request.params.id),
  );

  app.get(
    '/v1/refunds',
    {
      config: { access: 'transactions:read' },
      schema: {
        ...keyedRoute('Refunds'),
        summary: 'List refunds, newest first',
        description:
          'Filters: service_transaction_id, status. Includes refunds made by cancels and disputes.',
        querystring: ListRefundsQuery,
        response: answers(listOf(RefundObject)),
      },
    },
    async (request) => listRefundViews(ctx, merchantOf(request), request.query),
  );
};
