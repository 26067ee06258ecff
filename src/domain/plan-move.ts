import { ApiError, invalid } from './errors.ts';
import { MOVEMENTS, type Posting } from './ledger.ts';
import { type Action, findMove, type Move } from './state-machine.ts';

/** The part of a transaction the state machine and the money rules read. */
export interface MoneyState {
  status: string;
  settlement_status: string;
  amount_minor: bigint;
  /** Approved for release (escrow → seller payable), paid out or not. */
  amount_released_minor: bigint;
  /** Refunded in all, from escrow and from the merchant's balance. */
  amount_refunded_minor: bigint;
  /** The part of amount_refunded_minor paid from the merchant's balance (after release). */
  amount_refunded_from_balance_minor: bigint;
  /** Released funds in paid payouts. */
  amount_paid_out_minor: bigint;
}

export interface MoveOptions {
  /** release: the part to approve (below what is held: a partial release). refund: the amount. */
  amountMinor?: bigint;
  /** resolve_split: the seller's part of what is held; the rest goes back to the buyer. */
  toSellerMinor?: bigint;
  /** refund: paid-out funds may still be refunded from the merchant's balance (agreement window). */
  balanceRefundAllowed?: boolean;
  /** refund_failed: the failed refund's parts, and the status it moved the transaction from. */
  returned?: { fromHoldMinor: bigint; fromBalanceMinor: bigint; restoreStatus: string | null };
}

export interface Plan {
  /** The table's move, or null when money moves and the state stays (partial release or refund). */
  move: Move | null;
  status: string;
  settlementStatus: string;
  releasedMinor: bigint;
  refundedMinor: bigint;
  refundedFromBalanceMinor: bigint;
  /** Where the refunded money of this move comes from (refunds only). */
  refund?: { fromHoldMinor: bigint; fromBalanceMinor: bigint };
  postings: Posting[];
}

const UNPAID = new Set(['pending_payment', 'cancelled', 'expired']);

/** Funds captured and still held for the buyer's protection. */
export function heldMinor(state: MoneyState): bigint {
  if (UNPAID.has(state.status)) return 0n;
  const refundedFromHold = state.amount_refunded_minor - state.amount_refunded_from_balance_minor;
  return state.amount_minor - state.amount_released_minor - refundedFromHold;
}

/** What a refund could still take: what is held, plus paid-out funds while the agreement allows. */
export function refundableMinor(state: MoneyState, balanceRefundAllowed: boolean): bigint {
  const fromBalance = balanceRefundAllowed
    ? state.amount_paid_out_minor - state.amount_refunded_from_balance_minor
    : 0n;
  return heldMinor(state) + fromBalance;
}

const VERB: Record<Action, string> = {
  capture: 'pay',
  cancel: 'cancel',
  expire: 'expire',
  deliver: 'deliver',
  confirm: 'confirm',
  release: 'release',
  auto_release: 'auto-release',
  time_release: 'release',
  refund: 'refund',
  refund_settled: 'settle the refund of',
  refund_failed: 'return the failed refund of',
  open_dispute: 'open a dispute on',
  review_dispute: 'review the dispute of',
  resolve_seller: 'resolve the dispute of',
  resolve_buyer: 'resolve the dispute of',
  resolve_split: 'resolve the dispute of',
  payout_paid: 'complete the payout of',
  payout_reversed: 'reverse the payout of',
  approve_returned: 'approve the returned refund of',
};

function conflict(action: Action, state: MoneyState, why = ''): ApiError {
  return new ApiError(
    'conflict',
    `Cannot ${VERB[action]} a transaction whose status is ${state.status}${why}.`,
  );
}

function planOf(state: MoneyState, move: Move | null, change: Partial<Plan> & { postings: Posting[] }): Plan {
  return {
    move,
    status: move?.to ?? state.status,
    settlementStatus: move?.settlement ?? state.settlement_status,
    releasedMinor: state.amount_released_minor,
    refundedMinor: state.amount_refunded_minor,
    refundedFromBalanceMinor: state.amount_refunded_from_balance_minor,
    ...change,
  };
}

/** A refund (POST /v1/refunds): from escrow first, then from the merchant's balance. */
function planRefund(state: MoneyState, options: MoveOptions): Plan {
  const fullMove = findMove('refund', state.status, state.settlement_status);
  if (!fullMove) throw conflict('refund', state);
  const held = heldMinor(state);
  const refundable = refundableMinor(state, options.balanceRefundAllowed === true);
  if (refundable <= 0n) {
    const why =
      state.amount_paid_out_minor > state.amount_refunded_from_balance_minor
        ? ': the merchant agreement no longer allows refunds of paid-out funds'
        : ': nothing is left to refund';
    throw conflict('refund', state, why);
  }
  const amount = options.amountMinor ?? refundable;
  if (amount <= 0n || amount > refundable) {
    throw invalid('amount', 'amount must be greater than 0 and at most what can still be refunded.');
  }
  // bigint: no Math.min.
  let fromHoldMinor = held;
  if (amount < held) fromHoldMinor = amount;
  const fromBalanceMinor = amount - fromHoldMinor;
  const refunded = state.amount_refunded_minor + amount;
  const postings = [
    ...(fromHoldMinor > 0n ? MOVEMENTS.refundFromHold(fromHoldMinor) : []),
    ...(fromBalanceMinor > 0n ? MOVEMENTS.refundFromBalance(fromBalanceMinor) : []),
  ];
  return planOf(state, refunded === state.amount_minor ? fullMove : null, {
    refundedMinor: refunded,
    refundedFromBalanceMinor: state.amount_refunded_from_balance_minor + fromBalanceMinor,
    refund: { fromHoldMinor, fromBalanceMinor },
    postings,
  });
}

/** A refund the rail could not pay: its money goes back, and a state it moved is restored. */
function planRefundReturned(state: MoneyState, options: MoveOptions): Plan {
  const returned = options.returned;
  if (!returned) throw new Error('refund_failed needs the refund it returns');
  const total = returned.fromHoldMinor + returned.fromBalanceMinor;
  if (
    total <= 0n ||
    total > state.amount_refunded_minor ||
    returned.fromBalanceMinor > state.amount_refunded_from_balance_minor
  ) {
    throw new Error('a returned refund cannot exceed what was refunded');
  }
  let move: Move | null = null;
  if (returned.restoreStatus !== null) {
    move = findMove('refund_failed', state.status, state.settlement_status, returned.restoreStatus) ?? null;
    if (!move) throw conflict('refund_failed', state);
  }
  return planOf(state, move, {
    refundedMinor: state.amount_refunded_minor - total,
    refundedFromBalanceMinor: state.amount_refunded_from_balance_minor - returned.fromBalanceMinor,
    postings: MOVEMENTS.refundReturned(returned.fromHoldMinor, returned.fromBalanceMinor),
  });
}

/**
 * Decides what an action does to a transaction: its next state and its ledger postings.
 * Pure; throws 409 conflict for a move the table does not have, 400 for a bad amount.
 */
export function planMove(state: MoneyState, action: Action, options: MoveOptions = {}): Plan {
  if (action === 'refund') return planRefund(state, options);
  if (action === 'refund_failed') return planRefundReturned(state, options);
  const move = findMove(action, state.status, state.settlement_status);
  if (!move) throw conflict(action, state);
  const held = heldMinor(state);
  const { amountMinor } = options;

  if (amountMinor !== undefined) {
    if (action !== 'release') throw invalid('amount', 'amount applies only to release.');
    if (amountMinor <= 0n || amountMinor > held) {
      throw invalid('amount', 'amount must be greater than 0 and at most the amount still held.');
    }
    if (amountMinor < held) {
      return planOf(state, null, {
        releasedMinor: state.amount_released_minor + amountMinor,
        postings: MOVEMENTS.approve(amountMinor),
      });
    }
  }

  switch (move.money) {
    case 'capture':
      return planOf(state, move, { postings: MOVEMENTS.capture(state.amount_minor) });
    case 'approve_all':
      return planOf(state, move, {
        releasedMinor: state.amount_released_minor + held,
        postings: held > 0n ? MOVEMENTS.approve(held) : [],
      });
    case 'refund_all':
      return planOf(state, move, {
        refundedMinor: state.amount_refunded_minor + held,
        refund: { fromHoldMinor: held, fromBalanceMinor: 0n },
        postings: held > 0n ? MOVEMENTS.refundFromHold(held) : [],
      });
    case 'split': {
      const toSeller = options.toSellerMinor;
      if (toSeller === undefined || toSeller <= 0n || toSeller >= held) {
        throw invalid(
          'amount_to_seller',
          'A split gives each side a part: amount_to_seller must be above 0 and below the amount held.',
        );
      }
      const toBuyer = held - toSeller;
      return planOf(state, move, {
        releasedMinor: state.amount_released_minor + toSeller,
        refundedMinor: state.amount_refunded_minor + toBuyer,
        refund: { fromHoldMinor: toBuyer, fromBalanceMinor: 0n },
        postings: [...MOVEMENTS.approve(toSeller), ...MOVEMENTS.refundFromHold(toBuyer)],
      });
    }
    case 'refund':
    case 'refund_returned':
      throw new Error(`${action} is planned by its own rule`);
    case 'none':
      return planOf(state, move, { postings: [] });
  }
}
