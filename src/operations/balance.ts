import { type Currency, isCurrency, toMajorUnits } from '../domain/money.ts';
import type { BalanceView, CurrencyBalanceView } from '../schemas/balance.ts';
import { type JournalBalanceRow, journalBalances } from '../store/balance.ts';
import type { ServiceContext } from './context.ts';
import type { MerchantPrincipal } from './principal.ts';

const ZERO: Omit<JournalBalanceRow, 'currency'> = {
  escrow_held: 0n,
  seller_payable: 0n,
  payout_clearing: 0n,
  refund_clearing: 0n,
  merchant_balance: 0n,
  payout_paid: 0n,
  payout_reversed: 0n,
  refund_paid: 0n,
};

/**
 * A currency's figures as the merchant reads them. The liability accounts (escrow_held,
 * seller_payable, payout_clearing, refund_clearing) carry credit balances, so their figures are
 * negated; merchant_balance is negated too, so a negative figure means the merchant owes.
 */
function currencyView(row: JournalBalanceRow): CurrencyBalanceView {
  const currency = row.currency as Currency;
  const pair = (minor: bigint) => ({ major: toMajorUnits(minor, currency), minor: Number(minor) });
  const held = pair(-row.escrow_held);
  const approved = pair(-row.seller_payable);
  const inTransit = pair(-row.payout_clearing);
  const paidOut = pair(row.payout_paid - row.payout_reversed);
  const refundPending = pair(-row.refund_clearing);
  const refunded = pair(row.refund_paid);
  const merchantBalance = pair(-row.merchant_balance);
  return {
    currency: row.currency,
    held: held.major,
    held_minor: held.minor,
    approved_for_release: approved.major,
    approved_for_release_minor: approved.minor,
    in_transit: inTransit.major,
    in_transit_minor: inTransit.minor,
    paid_out: paidOut.major,
    paid_out_minor: paidOut.minor,
    refund_pending: refundPending.major,
    refund_pending_minor: refundPending.minor,
    refunded: refunded.major,
    refunded_minor: refunded.minor,
    merchant_balance: merchantBalance.major,
    merchant_balance_minor: merchantBalance.minor,
  };
}

/** GET /v1/balance: the caller's environment, per currency, recomputed from the journal. */
export async function getBalance(ctx: ServiceContext, merchant: MerchantPrincipal): Promise<BalanceView> {
  const rows = await journalBalances(ctx.db, {
    merchantId: merchant.merchantId,
    livemode: merchant.livemode,
  });
  if (isCurrency(merchant.defaultCurrency) && !rows.some((r) => r.currency === merchant.defaultCurrency)) {
    rows.push({ currency: merchant.defaultCurrency, ...ZERO });
    rows.sort((a, b) => a.currency.localeCompare(b.currency));
  }
  return { object: 'balance', livemode: merchant.livemode, currencies: rows.map(currencyView) };
}
