import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The operator console's session: a cookie holding the operator key's id, an expiry and a random
 * session id, signed with HMAC-SHA256 under a key derived (HKDF) from the service secret with a
 * label of its own, so it can never be confused with a link token or a sealed secret. Nothing is
 * stored server-side; the key is looked up again on every request, so revoking it ends every
 * session at once. CSRF tokens are an HMAC of the session id under a second derived key: bound to
 * the session, unforgeable without the service secret, and never stored.
 */

export const SESSION_COOKIE = 'safehold_operator';
/** Before sign-in there is no session: the sign-in form is bound to this short-lived nonce instead. */
export const SIGN_IN_COOKIE = 'safehold_operator_sign_in';
export const SESSION_SECONDS = 8 * 60 * 60;
const SIGN_IN_SECONDS = 60 * 60;
const COOKIE_PATH = '/operator';

export interface OperatorSession {
  keyId: string;
  expiresAt: Date;
  /** Random per sign-in; what CSRF tokens are bound to. */
  sessionId: string;
}

function derivedKey(serviceSecret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'safehold', `safehold ${label} v1`, 32));
}

function mac(key: Buffer, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `v1.<key id>.<expiry ms>.<session id>.<mac>`: ids and base64url hold no dots. */
export function signSession(serviceSecret: string, session: OperatorSession): string {
  const body = `v1.${session.keyId}.${session.expiresAt.getTime()}.${session.sessionId}`;
  return `${body}.${mac(derivedKey(serviceSecret, 'operator-session'), body)}`;
}

/** The session a cookie value carries, if its signature holds and it has not expired. */
export function openSession(serviceSecret: string, value: string, now: Date): OperatorSession | undefined {
  const parts = value.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1') return undefined;
  const [, keyId = '', expiry = '', sessionId = '', signature = ''] = parts;
  const body = parts.slice(0, 4).join('.');
  if (!sameText(signature, mac(derivedKey(serviceSecret, 'operator-session'), body))) return undefined;
  if (!/^\d{1,15}$/.test(expiry) || !keyId || !sessionId) return undefined;
  const expiresAt = new Date(Number(expiry));
  if (expiresAt.getTime() <= now.getTime()) return undefined;
  return { keyId, expiresAt, sessionId };
}

export function newSession(keyId: string, now: Date): OperatorSession {
  return {
    keyId,
    expiresAt: new Date(now.getTime() + SESSION_SECONDS * 1000),
    sessionId: randomBytes(16).toString('base64url'),
  };
}

export function csrfToken(serviceSecret: string, purpose: 'session' | 'sign-in', nonce: string): string {
  return mac(derivedKey(serviceSecret, 'operator-csrf'), `${purpose}:${nonce}`);
}

export function csrfMatches(
  serviceSecret: string,
  purpose: 'session' | 'sign-in',
  nonce: string,
  given: string | undefined,
): boolean {
  return given !== undefined && sameText(given, csrfToken(serviceSecret, purpose, nonce));
}

export function newSignInNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** One cookie's value from the Cookie header (no cookie library: two cookies, simple values). */
export function cookieValue(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  const attributes = [`Path=${COOKIE_PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (secure) attributes.push('Secure');
  return [`${name}=${value}`, ...attributes].join('; ');
}

/** Appends Set-Cookie headers (Fastify joins repeated header values into an array). */
function setCookie(reply: FastifyReply, text: string): void {
  const existing = reply.getHeader('Set-Cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  reply.header('Set-Cookie', [...list, text]);
}

export function setSessionCookie(
  reply: FastifyReply,
  serviceSecret: string,
  session: OperatorSession,
  secure: boolean,
): void {
  setCookie(reply, cookie(SESSION_COOKIE, signSession(serviceSecret, session), SESSION_SECONDS, secure));
}

export function setSignInCookie(reply: FastifyReply, nonce: string, secure: boolean): void {
  setCookie(reply, cookie(SIGN_IN_COOKIE, nonce, SIGN_IN_SECONDS, secure));
}

export function clearCookie(reply: FastifyReply, name: string, secure: boolean): void {
  setCookie(reply, cookie(name, '', 0, secure));
}
