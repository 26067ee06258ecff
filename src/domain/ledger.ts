/**
 * Double-entry ledger rules. Each journal row moves one amount from a debit account to a credit
 * account of the same merchant, environment and currency, so every entry balances by construction
 * and, per currency, all accounts always sum to zero.
 *
 * Accounts (balance = debits - credits):
 * - rail_clearing:   money at the payment rails (asset; positive while the service holds funds).
 * - escrow_held:     captured funds held for buyers' protection (liability; negative = owed).
 * - seller_payable:  funds approved for release, waiting for the seller's payout (liability).
 * - payout_clearing: payouts sent to the rail, not yet confirmed paid (liability).
 * - refund_clearing: refunds owed to buyers, not yet confirmed by the rail (liability).
 * - merchant_balance: the merchant's own balance, debited for refunds after release (liability).
 */
export const ACCOUNTS = [
  'rail_clearing',
  'escrow_held',
  'seller_payable',
  'payout_clearing',
  'refund_clearing',
  'merchant_balance',
] as const;
export type Account = (typeof ACCOUNTS)[number];

export interface Posting {
  kind: string;
  debit: Account;
  credit: Account;
  amountMinor: bigint;
}

/** The postings of each kind of money movement. */
export const MOVEMENTS = {
  /** The buyer's payment is captured and held. */
  capture: (amountMinor: bigint): Posting[] => [
    { kind: 'capture', debit: 'rail_clearing', credit: 'escrow_held', amountMinor },
  ],
  /** Held funds are approved for release to the seller. */
  approve: (amountMinor: bigint): Posting[] => [
    { kind: 'approve', debit: 'escrow_held', credit: 'seller_payable', amountMinor },
  ],
  /** Held funds are owed back to the buyer; the rail has not yet paid them. */
  refundFromHold: (amountMinor: bigint): Posting[] => [
    { kind: 'refund', debit: 'escrow_held', credit: 'refund_clearing', amountMinor },
  ],
  /** The rail confirms the refund reached the buyer. */
  refundPaid: (amountMinor: bigint): Posting[] => [
    { kind: 'refund_paid', debit: 'refund_clearing', credit: 'rail_clearing', amountMinor },
  ],
} as const;

/** Rejects a posting that could not be part of a sound journal. */
export function assertPostable(posting: Posting): void {
  if (posting.amountMinor <= 0n) throw new Error(`posting ${posting.kind} must move a positive amount`);
  if (posting.debit === posting.credit)
    throw new Error(`posting ${posting.kind} debits and credits one account`);
}
