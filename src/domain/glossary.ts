/**
 * Glossary: the words this codebase uses for money held in escrow.
 *
 * - Merchant: the business that integrates Safehold over the API (one per account, owns keys and data).
 * - Environment: test (`livemode: false`, simulated rails) or live (real money). Data never crosses them.
 * - Protected transaction: one buyer payment that is captured and *held* instead of being paid to the seller.
 * - Hold / escrow: captured funds the service safeguards until a release condition is met.
 * - Release: approving held funds for the seller (status `confirmed`, settlement `approved_for_release`).
 * - Payout: the money movement that pays approved funds to the seller; after it the transaction is `released`.
 * - Settlement status: where the money is (held, frozen, approved, paid out, refunded), beside the lifecycle status.
 * - Minor units: integer amounts in the currency's smallest unit (cents); all arithmetic uses bigint minor units.
 * - Idempotency key: a client-chosen key that makes a retried mutation return the first result instead of acting twice.
 * - Outbox: the events table written in the same database transaction as the change it reports.
 */
export type Livemode = boolean;

export type Environment = 'test' | 'live';

export function environmentOf(livemode: Livemode): Environment {
  return livemode ? 'live' : 'test';
}
