import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { answerChallenge, loadChallenge } from '../operations/checkout.ts';
import { challengePage } from './challenge-page.ts';
import { payPath, unknownLinkPage } from './checkout-page.ts';
import type { WebDeps } from './deps.ts';
import { formFields } from './form-body.ts';
import { redirectTo, sendPage } from './layout.ts';

const ChallengeParams = Type.Object({ token: Type.String(), attemptId: Type.String() });

/** The test 3-D Secure challenge: a page with Approve and Fail, each a form post back to checkout. */
export const challengeRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  app.get(
    '/pay/:token/challenge/:attemptId',
    { schema: { hide: true, params: ChallengeParams } },
    async (request, reply) => {
      const { token, attemptId } = request.params;
      const found = await loadChallenge(ctx, token, attemptId);
      if (!found) return sendPage(reply, unknownLinkPage());
      if (found.attempt.status !== 'requires_action') return redirectTo(reply, payPath(token));
      return sendPage(reply, challengePage(token, found.checkout, found.attempt));
    },
  );

  app.post(
    '/pay/:token/challenge/:attemptId',
    { schema: { hide: true, params: ChallengeParams } },
    async (request, reply) => {
      const { token, attemptId } = request.params;
      const outcome = formFields(request.body).outcome;
      if (outcome !== 'approve' && outcome !== 'fail') {
        return redirectTo(reply, `${payPath(token)}/challenge/${encodeURIComponent(attemptId)}`);
      }
      const matched = await answerChallenge(ctx, token, attemptId, outcome === 'approve');
      if (!matched) return sendPage(reply, unknownLinkPage());
      return redirectTo(reply, payPath(token));
    },
  );
};
