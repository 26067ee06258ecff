/**
 * The test environment's refund rail. Refunds go back to the instrument the buyer paid with; one
 * ending in 5126 (card 4000 0000 0000 5126, as in Stripe's test cards, or a phone ending 5126)
 * pays normally but cannot receive refunds, so a refund's failure can be tried end to end.
 */
export const REFUND_FAILS_LAST4 = '5126';

export type RefundOutcome = { outcome: 'succeeded' } | { outcome: 'failed'; message: string };

export function simulatedRefundOutcome(paymentMethod: Record<string, unknown> | null): RefundOutcome {
  const last4 = paymentMethod?.last4 ?? paymentMethod?.phone_last4;
  if (last4 === REFUND_FAILS_LAST4) {
    return {
      outcome: 'failed',
      message: 'The buyer’s account could not receive the refund (test instrument ending 5126).',
    };
  }
  return { outcome: 'succeeded' };
}
