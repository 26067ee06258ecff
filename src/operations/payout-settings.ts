import { requestFingerprint } from '../domain/canonical-json.ts';
import { invalid, notFound } from '../domain/errors.ts';
import {
  ACCOUNT_NUMBER_PATTERN,
  BANK_CODE_PATTERN,
  PAYOUT_PHONE_PATTERN,
  PAYOUT_SCHEDULES,
  type PayoutSettingsInput,
  type PayoutSettingsView,
} from '../schemas/payouts.ts';
import type { Queryable } from '../store/db.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import { findMerchant } from '../store/merchants.ts';
import { schedulePayoutRunAt, schedulePayoutRuns } from '../store/payout-runs.ts';
import { findPayoutSettings, type PayoutSettingsRow, savePayoutSettings } from '../store/payout-settings.ts';
import { latestPayoutStatus, unbatchedFundsWait } from '../store/payouts.ts';
import type { Owner } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { payoutSettingsView } from './payout-view.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';

export async function getPayoutSettings(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
): Promise<PayoutSettingsView> {
  return payoutSettingsView(await findPayoutSettings(ctx.db, ownerOf(merchant)), merchant.livemode);
}

/** The fields each method needs, and no other method's: a 400 names the field at fault. */
function checkedRow(owner: Owner, input: PayoutSettingsInput, now: Date): PayoutSettingsRow {
  const refuse = (field: 'phone' | 'bank_code' | 'account_number', needed: boolean) => {
    if (needed && input[field] === undefined)
      throw invalid(field, `${field} is required for ${input.method}.`);
    if (!needed && input[field] !== undefined) {
      throw invalid(field, `${field} does not apply to ${input.method}.`);
    }
  };
  const mobile = input.method === 'mobile_money';
  refuse('phone', mobile);
  refuse('bank_code', !mobile);
  refuse('account_number', !mobile);
  return {
    merchant_id: owner.merchantId,
    livemode: owner.livemode,
    method: input.method,
    phone: input.phone ?? null,
    bank_code: input.bank_code ?? null,
    account_number: input.account_number ?? null,
    schedule: input.schedule ?? 'daily',
    updated_at: now,
  };
}

/**
 * With approved funds waiting, new settings bring the next run forward: at once on the instant
 * schedule, or when the latest payout failed (the merchant has just fixed where it goes);
 * otherwise the daily run at the next midnight UTC.
 */
async function scheduleAfterSave(tx: Queryable, saved: PayoutSettingsRow, now: Date): Promise<void> {
  const owner = { merchantId: saved.merchant_id, livemode: saved.livemode };
  if (!(await unbatchedFundsWait(tx, owner))) return;
  if (saved.schedule === 'instant' || (await latestPayoutStatus(tx, owner)) === 'failed') {
    await schedulePayoutRunAt(tx, owner, now, now);
  } else {
    await schedulePayoutRuns(tx, [{ ...owner, now }]);
  }
}

/** POST /v1/payout_settings: replaces the environment's payout method and schedule. */
export async function updatePayoutSettings(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: PayoutSettingsInput,
  headerKey: string | undefined,
): Promise<{ settings: PayoutSettingsView; replayed: boolean }> {
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);
  const { idempotency_key: _key, ...body } = input;
  const row = checkedRow(owner, input, now);
  let saved: PayoutSettingsRow | undefined;
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      { owner, key, operation: 'POST /v1/payout_settings', fingerprint: requestFingerprint(body), now },
      async () => {
        saved = await savePayoutSettings(tx, row);
        await scheduleAfterSave(tx, saved, now);
        return { status: 200, resourceType: 'payout_settings', resourceId: merchant.merchantId };
      },
    ),
  );
  // A replay answers with the settings as they are now (a later request may have changed them).
  const current = saved ?? (await findPayoutSettings(ctx.db, owner));
  return { settings: payoutSettingsView(current, merchant.livemode), replayed: outcome.replayed };
}

/**
 * `safehold merchant payout-method`: the operator sets a merchant's payout method and schedule for
 * one environment, with the API's rules (the formats the API's schema checks are checked here).
 */
export async function setPayoutSettingsForMerchant(
  ctx: ServiceContext,
  owner: Owner,
  input: PayoutSettingsInput,
): Promise<PayoutSettingsView> {
  const formats = [
    ['phone', PAYOUT_PHONE_PATTERN, 'an E.164 number: + then 8 to 15 digits'],
    ['bank_code', BANK_CODE_PATTERN, '2 to 11 letters or digits'],
    ['account_number', ACCOUNT_NUMBER_PATTERN, '4 to 34 letters or digits'],
  ] as const;
  if (input.method !== 'mobile_money' && input.method !== 'bank_transfer') {
    throw invalid('method', 'method must be mobile_money or bank_transfer.');
  }
  for (const [field, pattern, rule] of formats) {
    const value = input[field];
    if (value !== undefined && !new RegExp(pattern).test(value))
      throw invalid(field, `${field} must be ${rule}.`);
  }
  if (input.schedule !== undefined && !(PAYOUT_SCHEDULES as readonly string[]).includes(input.schedule)) {
    throw invalid('schedule', 'schedule must be instant or daily.');
  }
  if (!(await findMerchant(ctx.db, owner.merchantId))) throw notFound('merchant', owner.merchantId);
  const offset = owner.livemode ? 0 : await findMerchantClock(ctx.db, owner.merchantId);
  const now = new Date(ctx.clock.now().getTime() + offset);
  const row = checkedRow(owner, input, now);
  const saved = await ctx.db.transaction(async (tx) => {
    const written = await savePayoutSettings(tx, row);
    await scheduleAfterSave(tx, written, now);
    return written;
  });
  return payoutSettingsView(saved, owner.livemode);
}
