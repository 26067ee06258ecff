import { SCOPES } from '../domain/api-keys.ts';
import { ApiError, invalid } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { isCurrency } from '../domain/money.ts';
import {
  insertMerchant,
  updateRateLimit,
  updateVerification,
  type VerificationStatus,
} from '../store/merchants.ts';
import type { ServiceContext } from './context.ts';
import { issueKey } from './manage-keys.ts';

export interface CreatedMerchant {
  merchant_id: string;
  test_key: string;
  test_key_id: string;
  live_key: string;
  live_key_id: string;
}

/** A merchant with one test and one live key holding every scope. */
export async function createMerchant(
  ctx: ServiceContext,
  options: { name: string; email: string; defaultCurrency?: string; verified?: boolean },
): Promise<CreatedMerchant> {
  const currency = options.defaultCurrency ?? 'KES';
  if (!isCurrency(currency)) throw invalid('default_currency', `Currency '${currency}' is not supported.`);
  if (!options.name.trim()) throw invalid('name', 'A merchant needs a name.');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(options.email))
    throw invalid('email', 'A merchant needs a valid e-mail.');
  return ctx.db.transaction(async (tx) => {
    const now = ctx.clock.now();
    const id = newId('merchant');
    await insertMerchant(tx, {
      id,
      name: options.name,
      email: options.email,
      default_currency: currency,
      verification_status: options.verified ? 'verified' : 'unverified',
      created_at: now,
    });
    const test = await issueKey(tx, now, 'test', id, SCOPES);
    const live = await issueKey(tx, now, 'live', id, SCOPES);
    return {
      merchant_id: id,
      test_key: test.key,
      test_key_id: test.key_id,
      live_key: live.key,
      live_key_id: live.key_id,
    };
  });
}

export async function setMerchantVerification(
  ctx: ServiceContext,
  merchantId: string,
  status: VerificationStatus,
): Promise<void> {
  if (!(await updateVerification(ctx.db, merchantId, status))) {
    throw new ApiError('not_found', `No such merchant: '${merchantId}'.`);
  }
}

/** Per-merchant override of the default 60 requests per minute (null restores the default). */
export async function setMerchantRateLimit(
  ctx: ServiceContext,
  merchantId: string,
  perMinute: number | null,
): Promise<void> {
  if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1)) {
    throw invalid('rate_limit', 'The rate limit is a whole number of requests per minute, at least 1.');
  }
  if (!(await updateRateLimit(ctx.db, merchantId, perMinute))) {
    throw new ApiError('not_found', `No such merchant: '${merchantId}'.`);
  }
}
