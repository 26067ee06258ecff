import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { type BuyerView, confirmAsBuyer, loadBuyerView } from '../operations/buyer-actions.ts';
import { type BuyerNotice, buyerPage, buyerPath, unknownBuyerPage } from './buyer-page.ts';
import type { WebDeps } from './deps.ts';
import { redirectTo, sendPage } from './layout.ts';

const TokenParams = Type.Object({ token: Type.String() });

function cannotConfirm(view: BuyerView): BuyerNotice {
  if (view.status === 'confirmed' || view.status === 'released') {
    return {
      kind: 'info',
      heading: 'Already confirmed',
      text: 'This purchase is already confirmed; there is nothing more to do.',
    };
  }
  const why: Record<string, string> = {
    pending_payment: 'It has not been paid yet.',
    cancelled: 'It was cancelled.',
    expired: 'It expired before it was paid.',
    refunded: 'It was refunded.',
    disputed: 'A problem report about it is open.',
    under_review: 'It is under review.',
  };
  return {
    kind: 'error',
    heading: 'This purchase cannot be confirmed now',
    text: why[view.status] ?? 'Its status does not allow it.',
  };
}

/** The buyer page and its one action so far: confirm receipt. */
export const buyerRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  app.get('/buyer/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const { token } = request.params;
    const view = await loadBuyerView(ctx, token);
    return sendPage(reply, view ? buyerPage(token, view) : unknownBuyerPage());
  });

  app.post(
    '/buyer/:token/confirm',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const { token } = request.params;
      try {
        await confirmAsBuyer(ctx, token);
        return redirectTo(reply, buyerPath(token));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'authentication_failed') return sendPage(reply, unknownBuyerPage());
        if (error.code !== 'conflict') throw error;
        const view = await loadBuyerView(ctx, token);
        if (!view) return sendPage(reply, unknownBuyerPage());
        return sendPage(reply, buyerPage(token, view, cannotConfirm(view), 409));
      }
    },
  );
};
