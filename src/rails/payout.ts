/**
 * Payout rails: how a seller's money leaves the service. One interface fits both real shapes,
 * mobile-money B2C (M-Pesa's B2C payment request) and bank transfer: the rail accepts an
 * instruction at once, and reports the result later (a B2C result callback, a bank's status
 * report), which the service applies as a `payout_settle` job.
 */
export type PayoutMethod = 'mobile_money' | 'bank_transfer';

export const PAYOUT_METHODS: readonly PayoutMethod[] = ['mobile_money', 'bank_transfer'];

/** Where a payout goes, in full (kept in payouts.rail_destination; the API shows it masked). */
export type PayoutDestination =
  | { method: 'mobile_money'; phone: string }
  | { method: 'bank_transfer'; bank_code: string; account_number: string };

export interface PayoutInstruction {
  payoutId: string;
  amountMinor: bigint;
  currency: string;
  destination: PayoutDestination;
}

/** What the rail finally says about a payout it accepted. */
export type PayoutResult = { outcome: 'paid' } | { outcome: 'failed'; reason: string };

export type PayoutSubmission =
  /** The rail took the instruction; its result comes later through the reporter. */
  | { accepted: true; railReference: string }
  /** The rail could not take it now (no live rail wired): the payout stays pending. */
  | { accepted: false; reason: string };

/** Delivers a rail's result to the service later: a job due after delayMs on the merchant's clock. */
export type PayoutResultReporter = (
  payoutId: string,
  result: PayoutResult & { railReference: string },
  delayMs: number,
) => Promise<void>;

export interface PayoutRail {
  readonly name: string;
  submit(instruction: PayoutInstruction): Promise<PayoutSubmission>;
}

/** The last four characters of a destination: all the API ever shows of it. */
export function destinationLast4(destination: PayoutDestination): string {
  const full = destination.method === 'mobile_money' ? destination.phone : destination.account_number;
  return full.slice(-4);
}

/** The masked form shown by the API: the last four digits only. */
export function maskedDestination(destination: PayoutDestination): string {
  return `****${destinationLast4(destination)}`;
}
