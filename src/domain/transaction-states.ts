/** Lifecycle and settlement states (spec 3, resolutions 5), and the closed value sets of a transaction. */

export const TRANSACTION_STATUSES = [
  'pending_payment',
  'reserved',
  'delivered',
  'confirmed',
  'released',
  'disputed',
  'under_review',
  'refunded',
  'cancelled',
  'expired',
] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const SETTLEMENT_STATUSES = [
  'awaiting_payment',
  'pending_confirmation',
  'under_review',
  'approved_for_release',
  'released',
  'refund_pending',
  'refunded',
  'failed',
  'reversed',
] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

export const VERTICALS = [
  'general',
  'electronics',
  'fashion',
  'vehicles',
  'property',
  'services',
  'digital_goods',
  'agriculture',
] as const;
export type Vertical = (typeof VERTICALS)[number];

export const RELEASE_CONDITION_TYPES = ['buyer_confirmation', 'delivery_confirmation', 'time_based'] as const;
export type ReleaseConditionType = (typeof RELEASE_CONDITION_TYPES)[number];

export const DEFAULT_REVIEW_WINDOW_DAYS = 3;

/** Where a new transaction starts: the spec has no unpaid state, so resolutions 5 adds one. */
export const INITIAL_STATE = { status: 'pending_payment', settlement: 'awaiting_payment' } as const;
