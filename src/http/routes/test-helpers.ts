import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { reversePayoutForTest } from '../../operations/payout-reversal.ts';
import { advanceClock, payForTest } from '../../operations/test-helpers.ts';
import { IdParams } from '../../schemas/common.ts';
import { PayoutObject, ReversePayoutBody } from '../../schemas/payouts.ts';
import { TransactionObject } from '../../schemas/transaction.ts';
import { ClockAdvanceBody, TestClockObject, TestPayBody } from '../../schemas/transaction-actions.ts';
import { merchantOf } from '../auth.ts';
import { answers, idempotentPost, replyReplayed } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const testHelperRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/test_helpers/transactions/:id/pay',
    {
      config: { access: 'transactions:write' },
      schema: {
        ...idempotentPost('Test helpers'),
        summary: 'Pay a test transaction without the checkout page',
        description:
          'Test keys only. Same outcomes as the page: phones ending 0001 (insufficient funds), 1032 (cancelled), ' +
          '1037 (no response: timeout), 2001 (wrong PIN) fail, others succeed; cards 4242424242424242 succeeds, ' +
          '4000000000000002 declined, 4000000000009995 insufficient funds, 4000000000003220 needs the 3-D Secure ' +
          'challenge (left requires_action for its page, /pay/{token}). The simulated callback (or, for …1037, the timeout) is delivered before the answer.',
        params: IdParams,
        body: TestPayBody,
        response: answers(TransactionObject),
      },
    },
    async (request, reply) => {
      const result = await payForTest(
        ctx,
        merchantOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      replyReplayed(reply, result);
      return result.transaction;
    },
  );

  app.post(
    '/v1/test_helpers/clock/advance',
    {
      config: { access: 'transactions:write' },
      schema: {
        ...idempotentPost('Test helpers'),
        summary: "Advance the merchant's test clock",
        description:
          'Test keys only. Answers after every piece of work due by the new time has run: auto-releases, ' +
          'payment-window expiries, time-based releases, payment timeouts, payout runs and their results, ' +
          'webhook attempts (retries) and alerts.',
        body: ClockAdvanceBody,
        response: answers(TestClockObject),
      },
    },
    async (request) =>
      advanceClock(ctx, merchantOf(request), request.body, request.headers['idempotency-key']),
  );

  app.post(
    '/v1/test_helpers/payouts/:id/reverse',
    {
      config: { access: 'payouts:write' },
      schema: {
        ...idempotentPost('Test helpers'),
        summary: 'Reverse a paid test payout, as a rail may after paying',
        description:
          'Test keys only. A paid payout becomes reversed: its money is owed to the merchant again (merchant ' +
          'balance), its released transactions show settlement_status reversed, and payout.failed is sent with ' +
          'status reversed. Any other payout status: 409.',
        params: IdParams,
        body: ReversePayoutBody,
        response: answers(PayoutObject),
      },
    },
    async (request, reply) => {
      const result = await reversePayoutForTest(
        ctx,
        merchantOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      replyReplayed(reply, result);
      return result.payout;
    },
  );
};
