import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { activeOperatorKey, signInOperator } from '../operations/operator-console.ts';
import type { WebDeps } from './deps.ts';
import { formFields } from './form-body.ts';
import { operatorDisputeRoutes } from './operator-dispute-routes.ts';
import { consoleOf, installOperatorGuard, navOf, safeNext, secureCookies } from './operator-guard.ts';
import type { Notice } from './operator-layout.ts';
import { seeOther, sendOperatorPage } from './operator-layout.ts';
import { operatorMerchantRoutes } from './operator-merchant-routes.ts';
import {
  clearCookie,
  cookieValue,
  csrfMatches,
  csrfToken,
  newSession,
  newSignInNonce,
  openSession,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  setSessionCookie,
  setSignInCookie,
} from './operator-session.ts';
import { signInPage, signOutPage } from './operator-sign-in-page.ts';

/**
 * The operator console under /operator: sign-in and sign-out here, the dispute and business
 * queues behind the session guard (operator-guard.ts). Cookies are scoped to /operator.
 */
export const operatorRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, deps) => {
  const { ctx } = deps;
  // Read per response: the public URL is part of the context, not fixed at registration.
  const secure = () => secureCookies(ctx);

  /** The sign-in form, bound to a fresh nonce cookie (there is no session to bind it to yet). */
  function showSignIn(reply: FastifyReply, next: string, notice?: Notice, status = 200, keyRefused = false) {
    const nonce = newSignInNonce();
    setSignInCookie(reply, nonce, secure());
    return sendOperatorPage(
      reply,
      signInPage({ csrf: csrfToken(ctx.linkSecret, 'sign-in', nonce), next, notice, keyRefused }, status),
    );
  }

  async function alreadySignedIn(request: FastifyRequest): Promise<boolean> {
    const cookie = cookieValue(request, SESSION_COOKIE);
    const session = cookie ? openSession(ctx.linkSecret, cookie, ctx.clock.now()) : undefined;
    return session !== undefined && (await activeOperatorKey(ctx, session.keyId)) !== undefined;
  }

  app.get('/operator/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const next = safeNext(query.next);
    if (await alreadySignedIn(request)) return seeOther(reply, next);
    const notice: Notice | undefined =
      query.ended === '1'
        ? { kind: 'info', heading: 'Please sign in again', text: 'Your session ended or is no longer valid.' }
        : query.signed_out === '1'
          ? { kind: 'ok', heading: 'Signed out' }
          : undefined;
    return showSignIn(reply, next, notice);
  });

  app.post('/operator/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const form = formFields(request.body);
    const next = safeNext(form.next);
    const nonce = cookieValue(request, SIGN_IN_COOKIE);
    if (!nonce || !csrfMatches(ctx.linkSecret, 'sign-in', nonce, form.csrf_token)) {
      return showSignIn(
        reply,
        next,
        {
          kind: 'error',
          heading: 'The sign-in form expired',
          text: 'Nothing was sent. Paste the key again.',
        },
        403,
      );
    }
    try {
      const operator = await signInOperator(ctx, form.key ?? '');
      setSessionCookie(reply, ctx.linkSecret, newSession(operator.keyId, ctx.clock.now()), secure());
      clearCookie(reply, SIGN_IN_COOKIE, secure());
      request.log.info({ keyId: operator.keyId }, 'operator signed in to the console');
      return seeOther(reply, next);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code !== 'invalid_api_key' && error.code !== 'permission_denied') throw error;
      const heading = error.code === 'permission_denied' ? 'Merchant keys cannot sign in' : 'Key refused';
      return showSignIn(reply, next, { kind: 'error', heading, text: error.message }, error.status, true);
    }
  });

  await app.register(async (inside) => {
    installOperatorGuard(inside, ctx);

    inside.get('/operator', { schema: { hide: true } }, async (_request, reply) =>
      seeOther(reply, '/operator/disputes'),
    );

    // Signing out is a POST (with the CSRF token) so no link or image elsewhere can do it; the GET
    // shows the button for someone who typed the address.
    inside.get('/operator/sign-out', { schema: { hide: true } }, async (request, reply) =>
      sendOperatorPage(reply, signOutPage(navOf(request))),
    );

    inside.post('/operator/sign-out', { schema: { hide: true } }, async (request, reply) => {
      clearCookie(reply, SESSION_COOKIE, secure());
      request.log.info({ keyId: consoleOf(request).operator.keyId }, 'operator signed out of the console');
      return seeOther(reply, '/operator/sign-in?signed_out=1');
    });

    await inside.register(operatorDisputeRoutes, deps);
    await inside.register(operatorMerchantRoutes, deps);
  });
};
