import { type Currency, toMajorUnits } from '../domain/money.ts';
import { maskedDestination } from '../rails/payout.ts';
import type { PayoutLineView, PayoutSettingsView, PayoutView } from '../schemas/payouts.ts';
import type { PayoutSettingsRow } from '../store/payout-settings.ts';
import type { PayoutLineDetail, PayoutRow } from '../store/payouts.ts';
import { payoutDestination } from './payout-rails.ts';

/** Lines embedded in GET /v1/payouts/{id}; lists and events embed fewer (webhook bodies stay small). */
export const LINES_IN_PAYOUT = 1000;
export const LINES_IN_LISTS_AND_EVENTS = 100;

export function payoutLineView(line: PayoutLineDetail, currency: string): PayoutLineView {
  return {
    service_transaction_id: line.transaction_id,
    merchant_reference: line.merchant_reference,
    merchant_order_id: line.merchant_order_id,
    amount: toMajorUnits(line.amount_minor, currency as Currency),
    amount_minor: Number(line.amount_minor),
  };
}

/**
 * A payout as the API and its events show it (resolutions 8). `lines` holds the payout's first
 * lines as read (up to `limit`; one more tells that there are more).
 */
export function payoutView(payout: PayoutRow, lines: readonly PayoutLineDetail[], limit: number): PayoutView {
  return {
    object: 'payout',
    id: payout.id,
    status: payout.status,
    method: payout.method,
    destination: payout.destination,
    amount: toMajorUnits(payout.amount_minor, payout.currency as Currency),
    amount_minor: Number(payout.amount_minor),
    currency: payout.currency,
    line_count: payout.line_count,
    lines: lines.slice(0, limit).map((l) => payoutLineView(l, payout.currency)),
    lines_has_more: payout.line_count > limit,
    created_at: payout.created_at.toISOString(),
    paid_at: payout.paid_at?.toISOString() ?? null,
    failure_reason: payout.failure_reason,
    livemode: payout.livemode,
  };
}

/** Payout settings as the API shows them; without a row, the environment's default. */
export function payoutSettingsView(
  row: PayoutSettingsRow | undefined,
  livemode: boolean,
): PayoutSettingsView {
  const destination = payoutDestination(row, livemode);
  return {
    object: 'payout_settings',
    method: destination?.method ?? null,
    destination: destination ? maskedDestination(destination) : null,
    bank_code: destination?.method === 'bank_transfer' ? destination.bank_code : null,
    schedule: row?.schedule ?? 'daily',
    simulated: !row && !livemode,
    livemode,
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}
