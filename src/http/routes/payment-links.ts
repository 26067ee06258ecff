import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createPaymentLink } from '../../operations/payment-links.ts';
import { CreatePaymentLinkBody, PaymentLinkObject } from '../../schemas/transaction-actions.ts';
import { merchantOf } from '../auth.ts';
import { createdAnswers, idempotentPost, replyCreated } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const paymentLinkRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/payment_links',
    {
      config: { access: 'payment_links:write' },
      schema: {
        ...idempotentPost('Payment links'),
        summary: 'Create a share-safe checkout link',
        description:
          'For a transaction still waiting for payment. The URL carries only a random 256-bit token (stored hashed): ' +
          'no PII, no amount. It can pay that one transaction and nothing else.',
        body: CreatePaymentLinkBody,
        response: createdAnswers(PaymentLinkObject),
      },
    },
    async (request, reply) => {
      const result = await createPaymentLink(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyCreated(reply, result);
      return result.link;
    },
  );
};
