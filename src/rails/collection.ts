/**
 * Collection rails: how a buyer's money is taken. One interface fits the real rails' shapes:
 * M-Pesa Daraja STK Push (a push to the handset, then an asynchronous callback with a result
 * code) and a card processor (an authorisation that may first need a 3-D Secure challenge).
 */
export type CollectionMethod = 'mobile_money' | 'card';

export interface CollectionRequest {
  attemptId: string;
  method: CollectionMethod;
  amountMinor: bigint;
  currency: string;
  /** E.164 phone for mobile money. */
  phone?: string;
  /** Card number for card payments (never stored; only its last four digits are kept). */
  cardNumber?: string;
  description: string;
}

export type CollectionStart =
  /** The push is on the handset; the result arrives later through reportResult. */
  | { status: 'pending'; railReference: string }
  /** The card needs a 3-D Secure challenge before it can be authorised. */
  | { status: 'requires_action'; railReference: string }
  | { status: 'succeeded'; railReference: string }
  | { status: 'failed'; railReference: string | null; code: string; message: string };

/** The asynchronous result a rail reports for an attempt (a Daraja callback, a 3-D Secure return). */
export type CollectionResult =
  | { attemptId: string; outcome: 'succeeded'; railReference?: string }
  | { attemptId: string; outcome: 'failed'; code: string; message: string };

export interface CollectionRail {
  readonly name: string;
  /** How long an attempt waits for its asynchronous result; PUSH_TIMEOUT_SECONDS when absent. */
  readonly resultTimeoutSeconds?: number;
  start(request: CollectionRequest): Promise<CollectionStart>;
  /** Settles a 3-D Secure challenge (card rails); the result is reported like a callback. */
  completeChallenge?(attemptId: string, approved: boolean): CollectionResult;
}

/** How long the service waits for a push's callback before failing the attempt as timed out. */
export const PUSH_TIMEOUT_SECONDS = 60;
