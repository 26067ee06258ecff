import type { SettlementStatus, TransactionStatus } from './transaction-states.ts';

/**
 * The transaction state machine (resolutions 5) as one declarative table. Every operation that
 * changes a transaction's state looks its move up here; a move not in the table is a 409.
 *
 * An action is what happened (an API verb, a rail report, a deadline). The same action can lead
 * to different places from different states (cancel before payment cancels; after payment it refunds).
 */
export const ACTIONS = [
  'capture',
  'cancel',
  'expire',
  'deliver',
  'confirm',
  'release',
  'auto_release',
  'time_release',
  'refund',
  'refund_settled',
  'refund_failed',
  'open_dispute',
  'review_dispute',
  'resolve_seller',
  'resolve_buyer',
  'resolve_split',
  'payout_paid',
  'payout_reversed',
  'approve_returned',
] as const;
export type Action = (typeof ACTIONS)[number];

export interface Move {
  action: Action;
  from: TransactionStatus;
  /** When set, the move applies only from this settlement status. */
  fromSettlement?: SettlementStatus;
  to: TransactionStatus;
  settlement: SettlementStatus;
  /** What the move does to the money, posted to the ledger in the same database transaction. */
  money: 'capture' | 'approve_all' | 'refund_all' | 'refund' | 'refund_returned' | 'split' | 'none';
}

export const TRANSITIONS: readonly Move[] = [
  {
    action: 'capture',
    from: 'pending_payment',
    to: 'reserved',
    settlement: 'pending_confirmation',
    money: 'capture',
  },
  { action: 'cancel', from: 'pending_payment', to: 'cancelled', settlement: 'failed', money: 'none' },
  { action: 'expire', from: 'pending_payment', to: 'expired', settlement: 'failed', money: 'none' },
  { action: 'deliver', from: 'reserved', to: 'delivered', settlement: 'pending_confirmation', money: 'none' },
  {
    action: 'confirm',
    from: 'reserved',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'confirm',
    from: 'delivered',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'release',
    from: 'delivered',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'auto_release',
    from: 'delivered',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'time_release',
    from: 'reserved',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'time_release',
    from: 'delivered',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  { action: 'cancel', from: 'reserved', to: 'refunded', settlement: 'refund_pending', money: 'refund_all' },
  // POST /v1/refunds: a refund of everything left moves the transaction; a partial one keeps its
  // state (planMove returns no move). Held funds come back from escrow, paid-out ones from the
  // merchant's balance.
  ...(['reserved', 'delivered'] as const).map(
    (from): Move => ({
      action: 'refund',
      from,
      to: 'refunded',
      settlement: 'refund_pending',
      money: 'refund',
    }),
  ),
  {
    action: 'refund',
    from: 'released',
    fromSettlement: 'released',
    to: 'refunded',
    settlement: 'refund_pending',
    money: 'refund',
  },
  {
    action: 'refund_settled',
    from: 'refunded',
    fromSettlement: 'refund_pending',
    to: 'refunded',
    settlement: 'refunded',
    money: 'none',
  },
  // A refund the rail could not pay puts the transaction back where the refund found it.
  ...(
    [
      ['reserved', 'pending_confirmation'],
      ['delivered', 'pending_confirmation'],
      ['released', 'released'],
      ['under_review', 'under_review'],
    ] as const
  ).map(
    ([to, settlement]): Move => ({
      action: 'refund_failed',
      from: 'refunded',
      fromSettlement: 'refund_pending',
      to,
      settlement,
      money: 'refund_returned',
    }),
  ),
  // A dispute's refund (a split's buyer part) the rail could not pay, after the transaction moved
  // on: the money is held again and the case goes back to the operator to decide again.
  ...(
    [
      ['confirmed', 'approved_for_release'],
      ['released', 'released'],
    ] as const
  ).map(
    ([from, fromSettlement]): Move => ({
      action: 'refund_failed',
      from,
      fromSettlement,
      to: 'under_review',
      settlement: 'under_review',
      money: 'refund_returned',
    }),
  ),
  // Any other refund the rail could not pay after the transaction was confirmed: its money is
  // held again with no deadline left to release it, so it is approved for the seller, like a
  // failed refund that Stripe returns to the merchant's balance.
  ...(
    [
      ['confirmed', 'approved_for_release'],
      ['released', 'released'],
    ] as const
  ).map(
    ([from, settlement]): Move => ({
      action: 'approve_returned',
      from,
      fromSettlement: settlement,
      to: from,
      settlement,
      money: 'approve_all',
    }),
  ),
  // Disputes (resolutions 5, 8): opening freezes the funds; the evidence deadline or the operator
  // puts the case under review; the operator's decision moves the money.
  ...(['reserved', 'delivered'] as const).map(
    (from): Move => ({
      action: 'open_dispute',
      from,
      to: 'disputed',
      settlement: 'under_review',
      money: 'none',
    }),
  ),
  {
    action: 'review_dispute',
    from: 'disputed',
    to: 'under_review',
    settlement: 'under_review',
    money: 'none',
  },
  {
    action: 'resolve_seller',
    from: 'under_review',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'approve_all',
  },
  {
    action: 'resolve_buyer',
    from: 'under_review',
    to: 'refunded',
    settlement: 'refund_pending',
    money: 'refund_all',
  },
  {
    action: 'resolve_split',
    from: 'under_review',
    to: 'confirmed',
    settlement: 'approved_for_release',
    money: 'split',
  },
  // Payouts: the seller's payout containing the transaction is paid, or the rail reverses it.
  {
    action: 'payout_paid',
    from: 'confirmed',
    fromSettlement: 'approved_for_release',
    to: 'released',
    settlement: 'released',
    money: 'none',
  },
  {
    action: 'payout_reversed',
    from: 'released',
    fromSettlement: 'released',
    to: 'released',
    settlement: 'reversed',
    money: 'none',
  },
];

/** The table's move for an action from a state; `to` picks among moves that restore a state. */
export function findMove(
  action: Action,
  from: string,
  fromSettlement: string,
  to?: string,
): Move | undefined {
  return TRANSITIONS.find(
    (m) =>
      m.action === action &&
      m.from === from &&
      (m.fromSettlement === undefined || m.fromSettlement === fromSettlement) &&
      (to === undefined || m.to === to),
  );
}

/** Every (status, settlement_status) pair the table can produce, plus the initial one. */
export function reachablePairs(): Set<string> {
  const pairs = new Set<string>(['pending_payment/awaiting_payment']);
  for (const m of TRANSITIONS) pairs.add(`${m.to}/${m.settlement}`);
  return pairs;
}
