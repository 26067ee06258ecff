import { hashSecret, isScope, kindOfKey } from '../domain/api-keys.ts';
import { ApiError } from '../domain/errors.ts';
import { findKeyByHash } from '../store/api-keys.ts';
import type { ServiceContext } from './context.ts';
import type { Principal } from './principal.ts';

const invalidKey = (message: string) => new ApiError('invalid_api_key', message);

/** Turns an Authorization header into a principal, or fails with 401 invalid_api_key. */
export async function authenticate(ctx: ServiceContext, header: string | undefined): Promise<Principal> {
  if (!header) throw invalidKey('No API key provided. Send it as: Authorization: Bearer sk_test_…');
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match?.[1])
    throw invalidKey('Malformed Authorization header. Expected: Authorization: Bearer <API_KEY>.');
  const key = match[1];
  if (!kindOfKey(key)) throw invalidKey('Malformed API key. Keys look like sk_test_…, sk_live_… or sk_op_….');

  const row = await findKeyByHash(ctx.db, hashSecret(key));
  if (!row) throw invalidKey('Invalid API key.');
  const now = ctx.clock.now().getTime();
  if (row.revoked_at) throw invalidKey('This API key has been revoked.');
  if (row.expires_at && row.expires_at.getTime() <= now) {
    throw invalidKey('This API key was rotated and its 24-hour grace period has ended.');
  }
  if (row.kind === 'operator') return { kind: 'operator', keyId: row.id };
  if (!row.merchant_id || !row.merchant_default_currency || !row.merchant_verification_status) {
    throw invalidKey('Invalid API key.');
  }
  return {
    kind: 'merchant',
    keyId: row.id,
    merchantId: row.merchant_id,
    livemode: row.kind === 'live',
    scopes: row.scopes.filter(isScope),
    defaultCurrency: row.merchant_default_currency,
    verificationStatus: row.merchant_verification_status,
    rateLimitPerMinute: row.merchant_rate_limit_per_minute,
    testClockOffsetMs: Number(row.merchant_test_clock_offset_ms ?? 0n),
  };
}
