import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createPaymentLink } from '../../operations/payment-links.ts';
import { IdempotencyHeaders, keyedErrorResponses } from '../../schemas/common.ts';
import { CreatePaymentLinkBody, PaymentLinkObject } from '../../schemas/transaction-actions.ts';
import { merchantOf } from '../auth.ts';
import type { RouteDeps } from './deps.ts';

export const paymentLinkRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/payment_links',
    {
      config: { access: 'payment_links:write' },
      schema: {
        tags: ['Payment links'],
        summary: 'Create a share-safe checkout link',
        description:
          'For a transaction still waiting for payment. The URL carries only a random 256-bit token (stored hashed): ' +
          'no PII, no amount. It can pay that one transaction and nothing else.',
        security: [{ bearerAuth: [] }],
        headers: IdempotencyHeaders,
        body: CreatePaymentLinkBody,
        response: { 200: PaymentLinkObject, 201: PaymentLinkObject, ...keyedErrorResponses },
      },
    },
    async (request, reply) => {
      const result = await createPaymentLink(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(result.replayed ? 200 : 201).send(result.link);
    },
  );
};
