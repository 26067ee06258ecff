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
 * - merchant_balance: what the service and the merchant owe each other outside payouts: debited
 *   for refunds after release (positive = the merchant owes), credited with reversed payouts.
 *
 * Journal kinds, per transaction: capture; approve (escrow → payable); refund (escrow → refund
 * clearing) and refund_from_balance (merchant balance → refund clearing); refund_paid, or
 * refund_returned / refund_returned_to_balance when the rail could not pay; payout (payable →
 * payout clearing), payout_paid, payout_returned (a failed payout) and payout_reversed.
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
  /** Paid-out funds are refunded after release: the merchant's balance pays the buyer back. */
  refundFromBalance: (amountMinor: bigint): Posting[] => [
    { kind: 'refund_from_balance', debit: 'merchant_balance', credit: 'refund_clearing', amountMinor },
  ],
  /** The rail confirms the refund reached the buyer. */
  refundPaid: (amountMinor: bigint): Posting[] => [
    { kind: 'refund_paid', debit: 'refund_clearing', credit: 'rail_clearing', amountMinor },
  ],
  /** The rail could not pay the refund: each part goes back where it came from. */
  refundReturned: (fromHoldMinor: bigint, fromBalanceMinor: bigint): Posting[] => [
    ...(fromHoldMinor > 0n
      ? [
          {
            kind: 'refund_returned',
            debit: 'refund_clearing',
            credit: 'escrow_held',
            amountMinor: fromHoldMinor,
          } as const,
        ]
      : []),
    ...(fromBalanceMinor > 0n
      ? [
          {
            kind: 'refund_returned_to_balance',
            debit: 'refund_clearing',
            credit: 'merchant_balance',
            amountMinor: fromBalanceMinor,
          } as const,
        ]
      : []),
  ],
  /** Approved funds are batched into a payout sent to the seller's rail. */
  payout: (amountMinor: bigint): Posting[] => [
    { kind: 'payout', debit: 'seller_payable', credit: 'payout_clearing', amountMinor },
  ],
  /** The rail confirms the payout reached the seller. */
  payoutPaid: (amountMinor: bigint): Posting[] => [
    { kind: 'payout_paid', debit: 'payout_clearing', credit: 'rail_clearing', amountMinor },
  ],
  /** The payout failed: its funds are payable again, for the next run. */
  payoutReturned: (amountMinor: bigint): Posting[] => [
    { kind: 'payout_returned', debit: 'payout_clearing', credit: 'seller_payable', amountMinor },
  ],
  /** The rail reversed a paid payout: the money is back with the service, owed to the merchant. */
  payoutReversed: (amountMinor: bigint): Posting[] => [
    { kind: 'payout_reversed', debit: 'rail_clearing', credit: 'merchant_balance', amountMinor },
  ],
} as const;

/** Rejects a posting that could not be part of a sound journal. */
export function assertPostable(posting: Posting): void {
  if (posting.amountMinor <= 0n) throw new Error(`posting ${posting.kind} must move a positive amount`);
  if (posting.debit === posting.credit)
    throw new Error(`posting ${posting.kind} debits and credits one account`);
}
