import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../domain/errors.ts';
import {
  isMpesaCallbackToken,
  MPESA_CALLBACK_PATH,
  type MpesaCallbackOutcome,
  receiveMpesaCallback,
} from '../../operations/mpesa-callbacks.ts';
import type { RouteDeps } from './deps.ts';

const TokenParams = Type.Object({ token: Type.String() });

/** What Daraja expects back from a callback it delivered. */
const ACCEPTED = { ResultCode: 0, ResultDesc: 'Accepted' };

type Received = Exclude<MpesaCallbackOutcome, { kind: 'malformed' }>;

function logOutcome(log: FastifyBaseLogger, outcome: Received): void {
  const { checkoutRequestId, resultCode, receipt, amount } = outcome.callback;
  const attemptId = outcome.kind === 'unknown_attempt' ? undefined : outcome.attemptId;
  const fields = { checkoutRequestId, resultCode, receipt, amount, attemptId };
  if (outcome.kind === 'applied') {
    log.info(fields, `M-Pesa callback applied: ${outcome.outcome}`);
  } else if (resultCode !== 0 || (outcome.kind === 'already_final' && outcome.status === 'succeeded')) {
    log.info({ ...fields, kind: outcome.kind }, 'M-Pesa callback changed nothing');
  } else {
    // Money was taken that no attempt in flight accounts for (one that had timed out, or a push
    // whose answer was never recorded): someone must refund or reconcile it by its receipt.
    log.error(
      { ...fields, kind: outcome.kind },
      'M-Pesa reports a payment that no payment attempt in flight matches; reconcile it by its receipt',
    );
  }
}

/**
 * POST /rails/mpesa/callback/{token}: Daraja's STK Push results. No API key (Daraja has none);
 * the secret token in the path is the credential, checked before the body is read, and a wrong
 * one answers 404 as an unknown route would. Hidden from the OpenAPI document.
 */
export const railCallbackRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.post(
    `${MPESA_CALLBACK_PATH}/:token`,
    {
      schema: { hide: true, params: TokenParams },
      onRequest: async (request) => {
        const { token } = request.params as { token: string };
        if (!isMpesaCallbackToken(ctx, token)) {
          throw new ApiError('not_found', `No route POST ${MPESA_CALLBACK_PATH}/{token}.`);
        }
      },
    },
    async (request) => {
      const outcome = await receiveMpesaCallback(ctx, request.body);
      if (outcome.kind === 'malformed') {
        throw new ApiError('invalid_request', 'The body is not an M-Pesa STK Push callback.');
      }
      logOutcome(request.log, outcome);
      return ACCEPTED;
    },
  );
};
