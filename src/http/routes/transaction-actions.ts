import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { type TransactionVerb, transitionTransaction } from '../../operations/transition-transaction.ts';
import { IdParams } from '../../schemas/common.ts';
import { TransactionObject } from '../../schemas/transaction.ts';
import { ReleaseBody, TransitionBody } from '../../schemas/transaction-actions.ts';
import { merchantOf } from '../auth.ts';
import { answers, idempotentPost, replyReplayed } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

const VERBS: { verb: TransactionVerb; summary: string; description: string; body: TSchema }[] = [
  {
    verb: 'deliver',
    summary: 'Mark a transaction delivered',
    description:
      'reserved → delivered; starts the review window (review_deadline = now + review_window_days). ' +
      'A delivery_confirmation transaction is released (confirmed) at once.',
    body: TransitionBody,
  },
  {
    verb: 'confirm',
    summary: 'Confirm receipt for the buyer',
    description: 'reserved or delivered → confirmed; settlement approved_for_release.',
    body: TransitionBody,
  },
  {
    verb: 'release',
    summary: 'Release held funds',
    description:
      'delivered → confirmed / approved_for_release. With an amount below what is held, a partial release: ' +
      'that part is approved, the rest stays held and the status does not change.',
    body: ReleaseBody,
  },
  {
    verb: 'cancel',
    summary: 'Cancel a transaction',
    description:
      'pending_payment → cancelled (settlement failed); reserved (paid) → refunded (refund_pending, then refunded).',
    body: TransitionBody,
  },
];

export const transactionActionRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  for (const { verb, summary, description, body } of VERBS) {
    app.post(
      `/v1/transactions/:id/${verb}`,
      {
        config: { access: 'transactions:write' },
        schema: {
          ...idempotentPost('Transactions'),
          summary,
          description: `${description} Any other state answers 409 conflict and changes nothing. Idempotent with a key.`,
          params: IdParams,
          body,
          response: answers(TransactionObject),
        },
      },
      async (request, reply) => {
        const result = await transitionTransaction(
          ctx,
          merchantOf(request),
          request.params.id,
          verb,
          request.body as { amount?: number; idempotency_key?: string },
          request.headers['idempotency-key'],
        );
        replyReplayed(reply, result);
        return result.transaction;
      },
    );
  }
};
