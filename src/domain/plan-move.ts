import { ApiError, invalid } from './errors.ts';
import { MOVEMENTS, type Posting } from './ledger.ts';
import { type Action, findMove, type Move } from './state-machine.ts';

/** The part of a transaction the state machine and the money rules read. */
export interface MoneyState {
  status: string;
  settlement_status: string;
  amount_minor: bigint;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
}

export interface Plan {
  /** The table's move, or null for a partial release (money moves, the state stays). */
  move: Move | null;
  status: string;
  settlementStatus: string;
  releasedMinor: bigint;
  refundedMinor: bigint;
  postings: Posting[];
}

const UNPAID = new Set(['pending_payment', 'cancelled', 'expired']);

/** Funds captured and still held for the buyer's protection. */
export function heldMinor(state: MoneyState): bigint {
  if (UNPAID.has(state.status)) return 0n;
  return state.amount_minor - state.amount_released_minor - state.amount_refunded_minor;
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
  refund_settled: 'settle the refund of',
};

/**
 * Decides what an action does to a transaction: its next state and its ledger postings.
 * Pure; throws 409 conflict for a move the table does not have, 400 for a bad amount.
 */
export function planMove(state: MoneyState, action: Action, amountMinor?: bigint): Plan {
  const move = findMove(action, state.status, state.settlement_status);
  if (!move) {
    throw new ApiError('conflict', `Cannot ${VERB[action]} a transaction whose status is ${state.status}.`);
  }
  const held = heldMinor(state);
  let released = state.amount_released_minor;
  let refunded = state.amount_refunded_minor;
  const postings: Posting[] = [];

  if (amountMinor !== undefined) {
    if (action !== 'release') throw invalid('amount', `amount applies only to release.`);
    if (amountMinor <= 0n || amountMinor > held) {
      throw invalid('amount', 'amount must be greater than 0 and at most the amount still held.');
    }
    if (amountMinor < held) {
      postings.push(...MOVEMENTS.approve(amountMinor));
      return {
        move: null,
        status: state.status,
        settlementStatus: state.settlement_status,
        releasedMinor: released + amountMinor,
        refundedMinor: refunded,
        postings,
      };
    }
  }

  switch (move.money) {
    case 'capture':
      postings.push(...MOVEMENTS.capture(state.amount_minor));
      break;
    case 'approve_all':
      if (held > 0n) postings.push(...MOVEMENTS.approve(held));
      released += held;
      break;
    case 'refund_all':
      if (held > 0n) postings.push(...MOVEMENTS.refundFromHold(held));
      refunded += held;
      break;
    case 'refund_paid':
      if (refunded > 0n) postings.push(...MOVEMENTS.refundPaid(refunded));
      break;
    case 'none':
      break;
  }
  return {
    move,
    status: move.to,
    settlementStatus: move.settlement,
    releasedMinor: released,
    refundedMinor: refunded,
    postings,
  };
}
