import { type Static, Type } from 'typebox';

const major = (description: string) => Type.Number({ description: `${description} Major units.` });
const minor = Type.Integer({ description: 'The same in minor units.' });

const HELD = 'Captured and held in escrow for the buyers’ protection.';
const APPROVED = 'Approved for the seller, not yet in a payout.';
const IN_TRANSIT = 'In payouts sent to the rail, not yet confirmed paid.';
const PAID_OUT = 'Paid to the seller by payouts, less payouts the rail reversed.';
const REFUND_PENDING = 'Refunds started, waiting for the rail’s answer.';
const REFUNDED = 'Refunds the rail has paid to buyers.';
const MERCHANT_BALANCE =
  'What the service and the merchant owe each other outside payouts: negative when the merchant owes ' +
  '(refunds taken from its balance after release), positive when the service owes the merchant ' +
  '(reversed payouts).';

/** One currency's figures, each from the journal (docs/refunds.md#balance). */
export const CurrencyBalance = Type.Object({
  currency: Type.String(),
  held: major(HELD),
  held_minor: minor,
  approved_for_release: major(APPROVED),
  approved_for_release_minor: minor,
  in_transit: major(IN_TRANSIT),
  in_transit_minor: minor,
  paid_out: major(PAID_OUT),
  paid_out_minor: minor,
  refund_pending: major(REFUND_PENDING),
  refund_pending_minor: minor,
  refunded: major(REFUNDED),
  refunded_minor: minor,
  merchant_balance: major(MERCHANT_BALANCE),
  merchant_balance_minor: minor,
});
export type CurrencyBalanceView = Static<typeof CurrencyBalance>;

export const BalanceObject = Type.Object({
  object: Type.Literal('balance'),
  livemode: Type.Boolean(),
  currencies: Type.Array(CurrencyBalance, {
    description:
      'One entry per currency with journal rows in this environment, sorted by code; the merchant’s ' +
      'default currency is always present (zeros before any payment).',
  }),
});
export type BalanceView = Static<typeof BalanceObject>;
