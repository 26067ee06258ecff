import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getBalance } from '../../operations/balance.ts';
import { BalanceObject } from '../../schemas/balance.ts';
import { merchantOf } from '../auth.ts';
import { answers, keyedRoute } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const balanceRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.get(
    '/v1/balance',
    {
      config: { access: 'payouts:read' },
      schema: {
        ...keyedRoute('Balance'),
        summary: 'The money of this environment, per currency',
        description:
          'Recomputed from the journal: held, approved_for_release, in_transit, paid_out, refund_pending, ' +
          'refunded and merchant_balance (negative when the merchant owes), in major and minor units.',
        response: answers(BalanceObject),
      },
    },
    async (request) => getBalance(ctx, merchantOf(request)),
  );
};
