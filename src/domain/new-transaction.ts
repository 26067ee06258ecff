import type { CreateTransactionInput } from '../schemas/transaction.ts';
import { invalid } from './errors.ts';
import { type Currency, isCurrency, toMinorUnits } from './money.ts';
import {
  DEFAULT_REVIEW_WINDOW_DAYS,
  type ReleaseConditionType,
  type Vertical,
} from './transaction-states.ts';

/** A create request after both spec shapes are merged and every rule beyond the schema is checked. */
export interface NewTransaction {
  merchantReference: string | null;
  merchantOrderId: string | null;
  amountMinor: bigint;
  currency: Currency;
  title: string;
  vertical: Vertical;
  customer: { name: string | null; phone: string | null; email: string | null } | null;
  seller: { merchant_id: string | null; email: string | null; name: string | null } | null;
  releaseCondition: { type: ReleaseConditionType; review_window_days: number; release_at: string | null };
  callbackUrl: string | null;
  metadata: Record<string, string>;
}

export interface NewTransactionContext {
  defaultCurrency: string;
  livemode: boolean;
  now: Date;
}

/** Flat and nested forms of one field may both be given only when they agree (resolutions 4). */
function merged<T>(
  flat: T | undefined,
  nested: T | undefined,
  flatName: string,
  nestedName: string,
): T | undefined {
  if (flat !== undefined && nested !== undefined && flat !== nested) {
    throw invalid(flatName, `${flatName} and ${nestedName} are the same field in two shapes and must agree.`);
  }
  return flat ?? nested;
}

function checkCallbackUrl(url: string, livemode: boolean): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('callback_url', 'callback_url must be an absolute URL.');
  }
  const allowed = livemode ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(parsed.protocol)) {
    throw invalid(
      'callback_url',
      livemode
        ? 'callback_url must use https in live mode.'
        : 'callback_url must use https (or http in test mode).',
    );
  }
  if (parsed.username || parsed.password) {
    throw invalid('callback_url', 'callback_url may not carry credentials.');
  }
}

export function buildNewTransaction(
  input: CreateTransactionInput,
  ctx: NewTransactionContext,
): NewTransaction {
  const currency = input.currency ?? ctx.defaultCurrency;
  if (!isCurrency(currency)) throw invalid('currency', `currency '${currency}' is not supported.`);

  const amount = toMinorUnits(input.amount, currency);
  if (!amount.ok) throw invalid('amount', `amount ${amount.reason}.`);

  const sellerEmail = merged(input.seller_email, input.seller?.email, 'seller_email', 'seller.email');
  const windowDays =
    merged(
      input.satisfaction_days,
      input.release_condition?.review_window_days,
      'satisfaction_days',
      'release_condition.review_window_days',
    ) ?? DEFAULT_REVIEW_WINDOW_DAYS;

  const type = input.release_condition?.type ?? 'buyer_confirmation';
  const releaseAt = input.release_condition?.release_at;
  if (type === 'time_based') {
    if (releaseAt === undefined) {
      throw invalid(
        'release_condition.release_at',
        'release_condition.release_at is required for time_based.',
      );
    }
    const releaseMs = new Date(releaseAt).getTime();
    // The schema's date-time format admits forms Date cannot read (a leap second: 23:59:60).
    if (Number.isNaN(releaseMs)) {
      throw invalid(
        'release_condition.release_at',
        'release_condition.release_at must be a valid date-time.',
      );
    }
    if (releaseMs <= ctx.now.getTime()) {
      throw invalid('release_condition.release_at', 'release_condition.release_at must be in the future.');
    }
  } else if (releaseAt !== undefined) {
    throw invalid('release_condition.release_at', 'release_condition.release_at applies only to time_based.');
  }

  if (input.callback_url !== undefined) checkCallbackUrl(input.callback_url, ctx.livemode);

  const seller =
    input.seller || sellerEmail !== undefined
      ? {
          merchant_id: input.seller?.merchant_id ?? null,
          email: sellerEmail ?? null,
          name: input.seller?.name ?? null,
        }
      : null;

  return {
    merchantReference: input.merchant_reference ?? null,
    merchantOrderId: input.merchant_order_id ?? null,
    amountMinor: amount.minor,
    currency,
    title: input.title,
    vertical: input.vertical ?? 'general',
    customer: input.customer
      ? {
          name: input.customer.name ?? null,
          phone: input.customer.phone ?? null,
          email: input.customer.email ?? null,
        }
      : null,
    seller,
    releaseCondition: {
      type,
      review_window_days: windowDays,
      release_at: releaseAt === undefined ? null : new Date(releaseAt).toISOString(),
    },
    callbackUrl: input.callback_url ?? null,
    metadata: input.metadata ?? {},
  };
}
