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
  'refund_settled',
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
  money: 'capture' | 'approve_all' | 'refund_all' | 'refund_paid' | 'none';
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
  {
    action: 'refund_settled',
    from: 'refunded',
    fromSettlement: 'refund_pending',
    to: 'refunded',
    settlement: 'refunded',
    money: 'refund_paid',
  },
];

export function findMove(action: Action, from: string, fromSettlement: string): Move | undefined {
  return TRANSITIONS.find(
    (m) =>
      m.action === action &&
      m.from === from &&
      (m.fromSettlement === undefined || m.fromSettlement === fromSettlement),
  );
}

/** Every (status, settlement_status) pair the table can produce, plus the initial one. */
export function reachablePairs(): Set<string> {
  const pairs = new Set<string>(['pending_payment/awaiting_payment']);
  for (const m of TRANSITIONS) pairs.add(`${m.to}/${m.settlement}`);
  return pairs;
}
