import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createTransaction } from '../../operations/create-transaction.ts';
import { getTransaction, listTransactionViews } from '../../operations/read-transactions.ts';
import { IdParams, listOf } from '../../schemas/common.ts';
import {
  CreateTransactionBody,
  ListTransactionsQuery,
  TransactionObject,
} from '../../schemas/transaction.ts';
import { merchantOf } from '../auth.ts';
import { answers, createdAnswers, idempotentPost, keyedRoute, replyCreated } from '../keyed-route.ts';
import type { RouteDeps } from './deps.ts';

export const transactionRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    '/v1/transactions',
    {
      config: { access: 'transactions:write' },
      schema: {
        ...idempotentPost('Transactions'),
        summary: 'Create a protected transaction',
        description:
          'Accepts the flat and the nested shape. 201 on first create; a repeat with the same idempotency key ' +
          '(Idempotency-Key header or idempotency_key field) or the same merchant_reference and the same body ' +
          'answers 200 with Idempotent-Replayed: true; the same key or reference with a different body is 409.',
        body: CreateTransactionBody,
        response: createdAnswers(TransactionObject),
      },
    },
    async (request, reply) => {
      const result = await createTransaction(
        ctx,
        merchantOf(request),
        request.body,
        request.headers['idempotency-key'],
      );
      replyCreated(reply, result);
      return result.transaction;
    },
  );

  app.get(
    '/v1/transactions/:id',
    {
      config: { access: 'transactions:read' },
      schema: {
        ...keyedRoute('Transactions'),
        summary: 'Retrieve a transaction',
        params: IdParams,
        response: answers(TransactionObject),
      },
    },
    async (request) => getTransaction(ctx, merchantOf(request), request.params.id),
  );

  app.get(
    '/v1/transactions',
    {
      config: { access: 'transactions:read' },
      schema: {
        ...keyedRoute('Transactions'),
        summary: 'List transactions, newest first',
        querystring: ListTransactionsQuery,
        response: answers(listOf(TransactionObject)),
      },
    },
    async (request) => listTransactionViews(ctx, merchantOf(request), request.query),
  );
};
