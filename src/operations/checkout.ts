import { ApiError } from '../domain/errors.ts';
import { tokenHash } from '../domain/link-tokens.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import { findMerchant } from '../store/merchants.ts';
import { findAttempt, type PaymentAttemptRow } from '../store/payment-attempts.ts';
import { findPaymentLinkByTokenHash } from '../store/payment-links.ts';
import { findTransaction, type TransactionRow } from '../store/transactions.ts';
import { collectionRail } from './collection-rails.ts';
import type { ServiceContext } from './context.ts';
import { merchantNow } from './merchant-clock.ts';
import { reportCollectionResult, startPayment } from './payments.ts';

/**
 * The share-safe checkout behind a payment link: what the page may show (title, amount, seller
 * name, protection terms and the state of the payment, nothing about the buyer) and the payments
 * it may start. A link can pay its one transaction and do nothing else.
 */

/** Link tokens are 256-bit HMACs in base64url: exactly 43 characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function isWellFormedToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

export const CHECKOUT_STATES = [
  'payable',
  'processing',
  'requires_action',
  'paid',
  'refunded',
  'expired',
  'cancelled',
] as const;
export type CheckoutState = (typeof CHECKOUT_STATES)[number];

export interface AttemptSummary {
  id: string;
  method: 'mobile_money' | 'card';
  status: PaymentAttemptRow['status'];
  /** Last four digits of the phone or card. */
  last4: string;
  failureCode: string | null;
  failureMessage: string | null;
}

export interface ReleaseTerms {
  type: string;
  reviewWindowDays: number;
  releaseAt: Date | null;
  /** Set once the seller has delivered: when the review window ends. */
  reviewDeadline: Date | null;
}

/** Everything the checkout page shows; deliberately no customer, metadata or references. */
export interface Checkout {
  state: CheckoutState;
  /** The transaction status, for the paid page's wording. */
  transactionStatus: string;
  title: string;
  amountMinor: bigint;
  currency: string;
  sellerName: string;
  livemode: boolean;
  terms: ReleaseTerms;
  linkExpiresAt: Date;
  lastAttempt: AttemptSummary | null;
}

interface Resolved {
  checkout: Checkout;
  /** Internal only: never rendered. */
  transactionId: string;
  merchantId: string;
  now: Date;
}

type RowWithAttempt = TransactionRow & { last_payment_attempt_id?: string | null };

const PAID_STATUSES = new Set(['reserved', 'delivered', 'confirmed', 'released', 'disputed', 'under_review']);

function stateOf(row: TransactionRow, attempt: AttemptSummary | null, expired: boolean): CheckoutState {
  if (row.status === 'pending_payment') {
    if (attempt?.status === 'pending') return 'processing';
    if (attempt?.status === 'requires_action') return 'requires_action';
    return expired ? 'expired' : 'payable';
  }
  if (row.status === 'expired') return 'expired';
  if (row.status === 'cancelled') return 'cancelled';
  if (row.status === 'refunded') return 'refunded';
  if (PAID_STATUSES.has(row.status)) return 'paid';
  return 'paid';
}

export function releaseTerms(row: TransactionRow): ReleaseTerms {
  return {
    type: row.release_condition.type,
    reviewWindowDays: row.release_condition.review_window_days,
    releaseAt: row.release_condition.release_at ? new Date(row.release_condition.release_at) : null,
    reviewDeadline: row.review_deadline,
  };
}

export async function sellerNameOf(ctx: ServiceContext, row: TransactionRow): Promise<string> {
  if (row.seller?.name) return row.seller.name;
  return (await findMerchant(ctx.db, row.merchant_id))?.name ?? 'the seller';
}

function summarize(attempt: PaymentAttemptRow | undefined): AttemptSummary | null {
  if (!attempt) return null;
  return {
    id: attempt.id,
    method: attempt.method,
    status: attempt.status,
    last4: attempt.instrument,
    failureCode: attempt.failure_code,
    failureMessage: attempt.failure_message,
  };
}

async function resolve(ctx: ServiceContext, token: string): Promise<Resolved | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const link = await findPaymentLinkByTokenHash(ctx.db, tokenHash(token));
  if (!link) return undefined;
  const row: RowWithAttempt | undefined = await findTransaction(
    ctx.db,
    { merchantId: link.merchant_id, livemode: link.livemode },
    link.transaction_id,
  );
  if (!row) return undefined;
  const offset = await findMerchantClock(ctx.db, row.merchant_id);
  const now = merchantNow(ctx, { livemode: row.livemode, testClockOffsetMs: offset });
  const attempt = summarize(
    row.last_payment_attempt_id ? await findAttempt(ctx.db, row.last_payment_attempt_id) : undefined,
  );
  return {
    transactionId: row.id,
    merchantId: row.merchant_id,
    now,
    checkout: {
      state: stateOf(row, attempt, link.expires_at.getTime() <= now.getTime()),
      transactionStatus: row.status,
      title: row.title,
      amountMinor: row.amount_minor,
      currency: row.currency,
      sellerName: await sellerNameOf(ctx, row),
      livemode: row.livemode,
      terms: releaseTerms(row),
      linkExpiresAt: link.expires_at,
      lastAttempt: attempt,
    },
  };
}

/** The checkout a payment-link token opens, or undefined for a malformed or unknown token. */
export async function loadCheckout(ctx: ServiceContext, token: string): Promise<Checkout | undefined> {
  return (await resolve(ctx, token))?.checkout;
}

/** Checked buyer input for a payment; card expiry and CVC are checked for format and dropped. */
export type CheckoutPayment =
  | { method: 'mobile_money'; phone: string }
  | { method: 'card'; cardNumber: string };

export type FieldErrors = Partial<Record<'phone' | 'card_number' | 'expiry' | 'cvc', string>>;

export function parseMobileMoney(
  form: Record<string, string>,
): { ok: true; payment: CheckoutPayment } | { ok: false; errors: FieldErrors } {
  const phone = (form.phone ?? '').replace(/[\s().-]/g, '');
  if (!/^\+[1-9]\d{7,14}$/.test(phone)) {
    return {
      ok: false,
      errors: {
        phone:
          phone === ''
            ? 'Enter your mobile-money phone number.'
            : 'Enter the number in international format: + then country code and number, for example +254712345678.',
      },
    };
  }
  return { ok: true, payment: { method: 'mobile_money', phone } };
}

export function parseCard(
  form: Record<string, string>,
): { ok: true; payment: CheckoutPayment } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const number = (form.card_number ?? '').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number)) errors.card_number = 'Enter the card number: 12 to 19 digits.';
  const expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(form.expiry ?? '');
  const month = expiry ? Number(expiry[1]) : 0;
  if (!expiry || month < 1 || month > 12)
    errors.expiry = 'Enter the expiry date as MM/YY, for example 08/29.';
  if (!/^\d{3,4}$/.test((form.cvc ?? '').trim())) errors.cvc = 'Enter the 3 or 4 digit security code (CVC).';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, payment: { method: 'card', cardNumber: number } };
}

export type PayOutcome =
  | { kind: 'unknown_link' }
  /** The link cannot take a payment now (paid, expired, in progress): the page says why. */
  | { kind: 'not_payable'; state: CheckoutState }
  | { kind: 'started'; attempt: AttemptSummary };

/**
 * Starts a payment from the checkout page. The transaction must still be payable through this
 * link; a race with another payment or a cancellation comes back as not_payable, not an error.
 */
export async function payFromCheckout(
  ctx: ServiceContext,
  token: string,
  payment: CheckoutPayment,
): Promise<PayOutcome> {
  const resolved = await resolve(ctx, token);
  if (!resolved) return { kind: 'unknown_link' };
  if (resolved.checkout.state !== 'payable') return { kind: 'not_payable', state: resolved.checkout.state };
  try {
    const attempt = await startPayment(
      ctx,
      resolved.transactionId,
      payment.method === 'card'
        ? { method: 'card', card_number: payment.cardNumber }
        : { method: 'mobile_money', phone: payment.phone },
    );
    const summary = summarize(attempt);
    if (!summary) throw new Error('startPayment returned no attempt');
    return { kind: 'started', attempt: summary };
  } catch (error) {
    if (error instanceof ApiError && error.code === 'conflict') {
      const now = await resolve(ctx, token);
      return { kind: 'not_payable', state: now?.checkout.state ?? 'cancelled' };
    }
    throw error;
  }
}

async function resolveChallenge(
  ctx: ServiceContext,
  token: string,
  attemptId: string,
): Promise<{ resolved: Resolved; attempt: AttemptSummary } | undefined> {
  const resolved = await resolve(ctx, token);
  // The challenge page is the card simulator's: test mode only.
  if (!resolved || resolved.checkout.livemode) return undefined;
  const attempt = await findAttempt(ctx.db, attemptId);
  if (!attempt || attempt.transaction_id !== resolved.transactionId || attempt.method !== 'card') {
    return undefined;
  }
  const summary = summarize(attempt);
  return summary ? { resolved, attempt: summary } : undefined;
}

/** The card attempt a 3-D Secure challenge URL names, if it belongs to this link's transaction. */
export async function loadChallenge(
  ctx: ServiceContext,
  token: string,
  attemptId: string,
): Promise<{ checkout: Checkout; attempt: AttemptSummary } | undefined> {
  const found = await resolveChallenge(ctx, token, attemptId);
  return found && { checkout: found.resolved.checkout, attempt: found.attempt };
}

/**
 * Settles the test 3-D Secure challenge: the simulated card rail turns the buyer's choice into
 * its result, reported like a processor's return. Repeated answers change nothing.
 * Returns false when the link or attempt does not match.
 */
export async function answerChallenge(
  ctx: ServiceContext,
  token: string,
  attemptId: string,
  approved: boolean,
): Promise<boolean> {
  const found = await resolveChallenge(ctx, token, attemptId);
  if (!found) return false;
  if (found.attempt.status !== 'requires_action') return true;
  const { merchantId, now } = found.resolved;
  const rail = collectionRail(ctx, 'card', { merchantId, livemode: false, now });
  if (!rail.completeChallenge) throw new Error('the card rail has no 3-D Secure challenge');
  await reportCollectionResult(ctx, rail.completeChallenge(attemptId, approved));
  return true;
}
