import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/domain/errors.ts';
import { heldMinor, type MoneyState, planMove, refundableMinor } from '../../src/domain/plan-move.ts';

const state = (over: Partial<MoneyState>): MoneyState => ({
  status: 'delivered',
  settlement_status: 'pending_confirmation',
  amount_minor: 10_000n,
  amount_released_minor: 0n,
  amount_refunded_minor: 0n,
  amount_refunded_from_balance_minor: 0n,
  amount_paid_out_minor: 0n,
  ...over,
});

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
  return 'no error';
};

const kinds = (postings: { kind: string; amountMinor: bigint }[]) =>
  postings.map((p) => `${p.kind}:${p.amountMinor}`);

describe('planMove: refunds', () => {
  it('a full refund of held funds moves to refunded / refund_pending, from escrow', () => {
    const plan = planMove(state({}), 'refund');
    assert.equal(plan.status, 'refunded');
    assert.equal(plan.settlementStatus, 'refund_pending');
    assert.equal(plan.refundedMinor, 10_000n);
    assert.deepEqual(plan.refund, { fromHoldMinor: 10_000n, fromBalanceMinor: 0n });
    assert.deepEqual(kinds(plan.postings), ['refund:10000']);
  });

  it('a partial refund keeps the state and reduces what is held', () => {
    const before = state({});
    const plan = planMove(before, 'refund', { amountMinor: 2_500n });
    assert.equal(plan.move, null);
    assert.equal(plan.status, 'delivered');
    assert.equal(heldMinor({ ...before, amount_refunded_minor: plan.refundedMinor }), 7_500n);
  });

  it('after release, refunds come from the merchant balance only while the agreement allows', () => {
    const released = state({
      status: 'released',
      settlement_status: 'released',
      amount_released_minor: 10_000n,
      amount_paid_out_minor: 10_000n,
    });
    assert.equal(refundableMinor(released, false), 0n);
    assert.equal(
      code(() => planMove(released, 'refund')),
      'conflict',
    );
    const plan = planMove(released, 'refund', { balanceRefundAllowed: true, amountMinor: 4_000n });
    assert.equal(plan.move, null);
    assert.equal(plan.refundedFromBalanceMinor, 4_000n);
    assert.deepEqual(kinds(plan.postings), ['refund_from_balance:4000']);
    // What was paid out stays released; nothing is taken from escrow.
    assert.equal(
      heldMinor({ ...released, amount_refunded_minor: 4_000n, amount_refunded_from_balance_minor: 4_000n }),
      0n,
    );
  });

  it('a partly released, partly paid-out transaction refunds escrow first, then the balance', () => {
    const partly = state({ amount_released_minor: 4_000n, amount_paid_out_minor: 4_000n });
    const plan = planMove(partly, 'refund', { balanceRefundAllowed: true });
    assert.deepEqual(plan.refund, { fromHoldMinor: 6_000n, fromBalanceMinor: 4_000n });
    assert.equal(plan.status, 'refunded');
    assert.deepEqual(kinds(plan.postings), ['refund:6000', 'refund_from_balance:4000']);
  });

  it('refuses a refund above what is refundable (400) and from states without one (409)', () => {
    assert.equal(
      code(() => planMove(state({}), 'refund', { amountMinor: 10_001n })),
      'invalid_request',
    );
    assert.equal(
      code(() => planMove(state({}), 'refund', { amountMinor: 0n })),
      'invalid_request',
    );
    for (const status of [
      'pending_payment',
      'confirmed',
      'disputed',
      'under_review',
      'cancelled',
      'expired',
    ]) {
      assert.equal(
        code(() => planMove(state({ status }), 'refund')),
        'conflict',
        status,
      );
    }
  });

  it('a failed refund returns its parts and restores the state it moved', () => {
    const refunded = state({
      status: 'refunded',
      settlement_status: 'refund_pending',
      amount_released_minor: 4_000n,
      amount_paid_out_minor: 4_000n,
      amount_refunded_minor: 10_000n,
      amount_refunded_from_balance_minor: 4_000n,
    });
    const plan = planMove(refunded, 'refund_failed', {
      returned: { fromHoldMinor: 6_000n, fromBalanceMinor: 4_000n, restoreStatus: 'delivered' },
    });
    assert.equal(plan.status, 'delivered');
    assert.equal(plan.settlementStatus, 'pending_confirmation');
    assert.equal(plan.refundedMinor, 0n);
    assert.equal(plan.refundedFromBalanceMinor, 0n);
    assert.deepEqual(kinds(plan.postings), ['refund_returned:6000', 'refund_returned_to_balance:4000']);
  });
});

describe('planMove: disputes and payouts', () => {
  it('opens a dispute only before release, and the review and outcomes follow the table', () => {
    assert.equal(planMove(state({}), 'open_dispute').status, 'disputed');
    assert.equal(
      code(() => planMove(state({ status: 'confirmed' }), 'open_dispute')),
      'conflict',
    );
    const review = planMove(
      state({ status: 'disputed', settlement_status: 'under_review' }),
      'review_dispute',
    );
    assert.equal(review.status, 'under_review');
    const underReview = state({ status: 'under_review', settlement_status: 'under_review' });
    const seller = planMove(underReview, 'resolve_seller');
    assert.deepEqual([seller.status, seller.settlementStatus], ['confirmed', 'approved_for_release']);
    assert.deepEqual(kinds(seller.postings), ['approve:10000']);
    const buyer = planMove(underReview, 'resolve_buyer');
    assert.deepEqual([buyer.status, buyer.settlementStatus], ['refunded', 'refund_pending']);
    assert.deepEqual(buyer.refund, { fromHoldMinor: 10_000n, fromBalanceMinor: 0n });
  });

  it('a split approves the seller part and refunds the rest; both parts must be positive', () => {
    const underReview = state({ status: 'under_review', settlement_status: 'under_review' });
    const split = planMove(underReview, 'resolve_split', { toSellerMinor: 3_000n });
    assert.equal(split.status, 'confirmed');
    assert.equal(split.releasedMinor, 3_000n);
    assert.equal(split.refundedMinor, 7_000n);
    assert.deepEqual(kinds(split.postings), ['approve:3000', 'refund:7000']);
    for (const toSellerMinor of [0n, 10_000n, 12_000n, undefined]) {
      assert.equal(
        code(() => planMove(underReview, 'resolve_split', { toSellerMinor })),
        'invalid_request',
      );
    }
  });

  it('payout_paid releases a confirmed transaction; a reversal marks a released one reversed', () => {
    const paid = planMove(
      state({ status: 'confirmed', settlement_status: 'approved_for_release' }),
      'payout_paid',
    );
    assert.deepEqual([paid.status, paid.settlementStatus], ['released', 'released']);
    const reversed = planMove(
      state({ status: 'released', settlement_status: 'released' }),
      'payout_reversed',
    );
    assert.deepEqual([reversed.status, reversed.settlementStatus], ['released', 'reversed']);
    assert.equal(
      code(() => planMove(state({ status: 'released', settlement_status: 'reversed' }), 'payout_reversed')),
      'conflict',
    );
  });
});
