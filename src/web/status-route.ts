import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { CHECKOUT_STATES, isWellFormedToken, loadCheckout } from '../operations/checkout.ts';
import { ErrorEnvelope, Nullable } from '../schemas/common.ts';
import type { WebDeps } from './deps.ts';

const CheckoutStatus = Type.Object({
  object: Type.Literal('checkout_status'),
  state: Type.Enum(CHECKOUT_STATES),
  attempt: Nullable(
    Type.Object({
      method: Type.String(),
      status: Type.String(),
      failure_code: Nullable(Type.String()),
      failure_message: Nullable(Type.String()),
    }),
  ),
});

/** GET /pay/{token}/status: what the checkout page polls while a payment is in progress. */
export const statusRoute: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  app.get(
    '/pay/:token/status',
    {
      schema: {
        tags: ['Checkout'],
        summary: 'The state of a checkout (polled by the checkout page)',
        description:
          'Public, authenticated by the payment-link token in the path. Shows the payment state only: ' +
          'no amount, no personal details. A malformed or unknown token answers 401 authentication_failed.',
        params: Type.Object({ token: Type.String() }),
        response: { 200: CheckoutStatus, 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const { token } = request.params;
      const checkout = isWellFormedToken(token) ? await loadCheckout(ctx, token) : undefined;
      if (!checkout) throw new ApiError('authentication_failed', 'This payment link is not valid.');
      const attempt = checkout.lastAttempt;
      return {
        object: 'checkout_status' as const,
        state: checkout.state,
        attempt: attempt && {
          method: attempt.method,
          status: attempt.status,
          failure_code: attempt.failureCode,
          failure_message: attempt.failureMessage,
        },
      };
    },
  );
};
