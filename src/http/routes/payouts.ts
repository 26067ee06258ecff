import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getPayout, listPayoutLineViews, listPayoutViews } from '../../operations/payout-reads.ts';
import { getPayoutSettings, updatePayoutSettings } from '../../operations/payout-settings.ts';
import { IdParams, listOf } from '../../schemas/common.ts';
import {
  ListPayoutsQuery,
  PayoutLineObject,
  PayoutLinesQuery,
  PayoutObject,
  PayoutSettingsBody,
  PayoutSettingsObject,
} from '../../schemas/payouts.ts';
import { merchantOf } from '../auth.ts';
import { answers, idempotentPost, keyedRoute, replyReplayed } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const payoutRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.get(
    '/v1/payout_settings',
    {
      config: { access: 'payouts:read' },
      schema: {
        ...keyedRoute('Payouts'),
        summary: 'Retrieve the payout method and schedule',
        description:
          "The key's environment. In test mode, until settings are saved, payouts go to the simulated M-Pesa " +
          'number +254700000000 (simulated: true); in live mode method is null until one is saved, and approved ' +
          'funds wait. The destination is masked (last four digits).',
        response: answers(PayoutSettingsObject),
      },
    },
    async (request) => getPayoutSettings(ctx, merchantOf(request)),
  );

  app.post(
    '/v1/payout_settings',
    {
      config: { access: 'payouts:write' },
      schema: {
        ...idempotentPost('Payouts'),
        summary: 'Set the payout method and schedule',
        description:
          'Replaces the settings of the key\'s environment: { method: "mobile_money", phone } or { method: ' +
          '"bank_transfer", bank_code, account_number }, and schedule "instant" or "daily" (default). With approved ' +
          'funds waiting, a run follows at once on the instant schedule or when the latest payout failed, else at ' +
          'the next midnight UTC. Accepts an idempotency key.',
        body: PayoutSettingsBody,
        response: answers(PayoutSettingsObject),
      },
    },
    async (request, reply) => {
      const result = await updatePayoutSettings(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyReplayed(reply, result);
      return result.settings;
    },
  );

  app.get(
    '/v1/payouts',
    {
      config: { access: 'payouts:read' },
      schema: {
        ...keyedRoute('Payouts'),
        summary: 'List payouts, newest first',
        description: 'Each payout embeds its first 100 lines; lines_has_more tells whether it has more.',
        querystring: ListPayoutsQuery,
        response: answers(listOf(PayoutObject)),
      },
    },
    async (request) => listPayoutViews(ctx, merchantOf(request), request.query),
  );

  app.get(
    '/v1/payouts/:id',
    {
      config: { access: 'payouts:read' },
      schema: {
        ...keyedRoute('Payouts'),
        summary: 'Retrieve a payout with its first 1,000 lines',
        description: 'All the lines of a bigger payout: GET /v1/payouts/{id}/lines.',
        params: IdParams,
        response: answers(PayoutObject),
      },
    },
    async (request) => getPayout(ctx, merchantOf(request), request.params.id),
  );

  app.get(
    '/v1/payouts/:id/lines',
    {
      config: { access: 'payouts:read' },
      schema: {
        ...keyedRoute('Payouts'),
        summary: "List a payout's lines, newest transaction first",
        description: 'Cursors (starting_after, ending_before) are service_transaction_ids.',
        params: IdParams,
        querystring: PayoutLinesQuery,
        response: answers(listOf(PayoutLineObject)),
      },
    },
    async (request) => listPayoutLineViews(ctx, merchantOf(request), request.params.id, request.query),
  );
};
