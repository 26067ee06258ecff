import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../operations/context.ts';
import { activeOperatorKey, type SignedInOperator } from '../operations/operator-console.ts';
import { formFields } from './form-body.ts';
import { html } from './html.ts';
import { type ConsoleNav, type ConsoleSection, seeOther, sendOperatorPage } from './operator-layout.ts';
import {
  clearCookie,
  cookieValue,
  csrfMatches,
  csrfToken,
  type OperatorSession,
  openSession,
  SESSION_COOKIE,
} from './operator-session.ts';

/**
 * The gate in front of every console page but sign-in: a valid signed session whose operator key
 * is still active (checked again on every request, so a revoked key is out at once), and on every
 * POST the session's CSRF token. Unauthenticated requests go to the sign-in page; nothing else
 * runs for them.
 */

export interface ConsoleRequest {
  session: OperatorSession;
  operator: SignedInOperator;
  /** The CSRF token every form on the page carries. */
  csrf: string;
}

const signedIn = new WeakMap<FastifyRequest, ConsoleRequest>();

export function consoleOf(request: FastifyRequest): ConsoleRequest {
  const found = signedIn.get(request);
  if (!found) throw new Error('console route reached without a session');
  return found;
}

export function navOf(request: FastifyRequest, current?: ConsoleSection): ConsoleNav {
  const { csrf, operator } = consoleOf(request);
  return { csrf, keyHint: operator.keyHint, current };
}

export function secureCookies(ctx: ServiceContext): boolean {
  return ctx.publicUrl.startsWith('https:');
}

/** Where to return after sign-in: console paths only, so the parameter cannot redirect elsewhere. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/operator(?:\/[A-Za-z0-9_-]+)*$/.test(value) && value.length <= 200
    ? value
    : '/operator/disputes';
}

function signInLocation(request: FastifyRequest, ended: boolean): string {
  const params = new URLSearchParams();
  const path = request.url.split('?')[0] ?? '';
  if (request.method === 'GET' && safeNext(path) === path) params.set('next', path);
  if (ended) params.set('ended', '1');
  const query = params.toString();
  return `/operator/sign-in${query ? `?${query}` : ''}`;
}

export function installOperatorGuard(app: FastifyInstance, ctx: ServiceContext): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const cookie = cookieValue(request, SESSION_COOKIE);
    const session = cookie ? openSession(ctx.linkSecret, cookie, ctx.clock.now()) : undefined;
    const operator = session ? await activeOperatorKey(ctx, session.keyId) : undefined;
    if (!session || !operator) {
      if (cookie) clearCookie(reply, SESSION_COOKIE, secureCookies(ctx));
      return seeOther(reply, signInLocation(request, cookie !== undefined));
    }
    if (request.method === 'POST') {
      const given = formFields(request.body).csrf_token;
      if (!csrfMatches(ctx.linkSecret, 'session', session.sessionId, given)) {
        request.log.warn({ keyId: operator.keyId }, 'operator console post without a valid CSRF token');
        return sendOperatorPage(reply, {
          status: 403,
          title: 'Form refused',
          body: html`<div class="notice error" role="alert"><h1>This form was refused</h1>
<p>It did not carry this session's security token, so nothing was changed. Reload the page and try again.</p></div>
<p><a href="/operator/disputes">Back to the dispute queue</a></p>`,
        });
      }
    }
    signedIn.set(request, {
      session,
      operator,
      csrf: csrfToken(ctx.linkSecret, 'session', session.sessionId),
    });
  });
}
