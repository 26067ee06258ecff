import { createHmac, timingSafeEqual } from 'node:crypto';
import { collectionResultOf, parseStkCallback, type StkCallback } from '../rails/mpesa-callback.ts';
import { findAttemptByRailReference } from '../store/payment-attempts.ts';
import type { ServiceContext } from './context.ts';
import { reportCollectionResult } from './payments.ts';

/** The callback URL's path prefix; the secret token follows it. */
export const MPESA_CALLBACK_PATH = '/rails/mpesa/callback';

/**
 * The secret in Daraja's callback URL: HMAC-SHA256 of 'mpesa-callback' under the service secret.
 * Daraja signs nothing, so only Safaricom, which is given the URL with each push, can post a
 * result; a stranger's guess answers 404.
 */
export function mpesaCallbackToken(secret: string): string {
  return createHmac('sha256', secret).update('mpesa-callback').digest('base64url');
}

export function isMpesaCallbackToken(ctx: ServiceContext, token: string): boolean {
  const expected = Buffer.from(mpesaCallbackToken(ctx.linkSecret));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The URL handed to Daraja with each push (MPESA_CALLBACK_BASE_URL, else PUBLIC_URL). */
export function mpesaCallbackUrl(ctx: ServiceContext): string {
  const base = ctx.mpesa?.callbackBaseUrl ?? ctx.publicUrl;
  return `${base}${MPESA_CALLBACK_PATH}/${mpesaCallbackToken(ctx.linkSecret)}`;
}

/** What a callback did, for the log; only `malformed` is the sender's mistake. */
export type MpesaCallbackOutcome =
  | { kind: 'malformed' }
  /** No live M-Pesa attempt has this CheckoutRequestID (a push whose answer never got recorded). */
  | { kind: 'unknown_attempt'; callback: StkCallback }
  | { kind: 'applied'; callback: StkCallback; attemptId: string; outcome: 'succeeded' | 'failed' }
  /** The attempt had already ended: nothing changed (a repeated callback). */
  | { kind: 'already_final'; callback: StkCallback; attemptId: string; status: string };

/**
 * Applies Daraja's result to the attempt whose rail reference is its CheckoutRequestID, like any
 * rail result (reportCollectionResult: capture on success, payable again on failure; repeated
 * results change nothing).
 */
export async function receiveMpesaCallback(
  ctx: ServiceContext,
  body: unknown,
): Promise<MpesaCallbackOutcome> {
  const callback = parseStkCallback(body);
  if (!callback) return { kind: 'malformed' };
  const attempt = await findAttemptByRailReference(ctx.db, callback.checkoutRequestId);
  if (!attempt?.livemode || attempt.method !== 'mobile_money') {
    return { kind: 'unknown_attempt', callback };
  }
  const result = collectionResultOf(callback, attempt.id);
  await reportCollectionResult(ctx, result);
  const after = await findAttemptByRailReference(ctx.db, callback.checkoutRequestId);
  const applied =
    (attempt.status === 'pending' || attempt.status === 'requires_action') &&
    after?.status === result.outcome;
  return applied
    ? { kind: 'applied', callback, attemptId: attempt.id, outcome: result.outcome }
    : { kind: 'already_final', callback, attemptId: attempt.id, status: after?.status ?? attempt.status };
}
