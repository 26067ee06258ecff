import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { decideVerification, verificationQueue } from '../operations/operator-console.ts';
import type { WebDeps } from './deps.ts';
import { formFields } from './form-body.ts';
import { consoleOf, navOf } from './operator-guard.ts';
import { type Notice, seeOther, sendOperatorPage } from './operator-layout.ts';
import { merchantsPage } from './operator-merchants-page.ts';

const MerchantParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** The business-verification queue (behind the console's session guard). */
export const operatorMerchantRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  app.get('/operator/merchants', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const decided = query.decided;
    const notice: Notice | undefined =
      (decided === 'verified' || decided === 'rejected') &&
      typeof query.merchant === 'string' &&
      /^mch_[0-9A-Z]{26}$/.test(query.merchant)
        ? {
            kind: 'ok',
            heading: decided === 'verified' ? 'Business verified' : 'Business rejected',
            text:
              decided === 'verified'
                ? `${query.merchant} is verified: its live keys work now.`
                : `${query.merchant} is rejected: its live keys stay refused.`,
          }
        : undefined;
    return sendOperatorPage(
      reply,
      merchantsPage(await verificationQueue(ctx), navOf(request, 'merchants'), notice),
    );
  });

  app.post(
    '/operator/merchants/:id/verification',
    { schema: { hide: true, params: MerchantParams } },
    async (request, reply) => {
      const { id } = request.params;
      const decision = formFields(request.body).decision;
      let refusal: ApiError;
      if (decision !== 'verified' && decision !== 'rejected') {
        refusal = new ApiError('invalid_request', 'Choose Approve or Reject.');
      } else {
        try {
          const done = await decideVerification(ctx, id, decision);
          request.log.info(
            { keyId: consoleOf(request).operator.keyId, merchantId: id, decision },
            'operator decided business verification',
          );
          return seeOther(
            reply,
            `/operator/merchants?decided=${done.status}&merchant=${encodeURIComponent(done.merchantId)}`,
          );
        } catch (error) {
          if (!(error instanceof ApiError) || !['not_found', 'conflict'].includes(error.code)) throw error;
          refusal = error;
        }
      }
      return sendOperatorPage(
        reply,
        merchantsPage(
          await verificationQueue(ctx),
          navOf(request, 'merchants'),
          { kind: 'error', heading: 'Nothing was changed', text: refusal.message },
          refusal.status,
        ),
      );
    },
  );
};
