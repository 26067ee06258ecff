import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The receiver kit: verifies a Safehold webhook before the body is trusted (spec 6.3). Standalone:
 * it imports nothing from the service, so merchants can use it from the package alone.
 */

/** Base class: the request did not come from Safehold as sent, or not recently. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** X-Service-Timestamp is missing, malformed, or further from now than the tolerance (answer 400). */
export class WebhookTimestampError extends WebhookVerificationError {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTimestampError';
  }
}

/** X-Service-Signature is missing or does not match the body and timestamp (answer 401). */
export class WebhookSignatureError extends WebhookVerificationError {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/** Node's IncomingHttpHeaders, a plain object with any header case, or a Fetch Headers. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted difference between X-Service-Timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's time (default: the system clock), as a Date or milliseconds. */
  now?: Date | number;
}

/** What every event carries (resolutions 9); status changes carry the fields of spec 2.3 too. */
export interface WebhookEvent {
  event_id: string;
  event_type: string;
  occurred_at: string;
  service_transaction_id?: string | null;
  merchant_reference?: string | null;
  merchant_order_id?: string | null;
  previous_status?: string;
  status?: string;
  settlement_status?: string;
  amount?: number;
  currency?: string;
  data?: Record<string, unknown>;
  [field: string]: unknown;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : (value as string | undefined);
}

function matches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  // timingSafeEqual needs equal lengths; comparing a against itself keeps the time the same.
  return timingSafeEqual(a, b.length === a.length ? b : a) && b.length === a.length;
}

/**
 * Verifies one webhook request and returns its event. Pass the raw body exactly as received
 * (before any JSON parsing), the request headers and your signing secret (`whsec_…`; a list is
 * accepted while you switch to a rotated one).
 *
 * Throws WebhookSignatureError when the signature is missing or wrong (answer 401), and
 * WebhookTimestampError when the timestamp is missing, malformed or more than toleranceSeconds
 * away from now (answer 400). The signature is checked first, so a forged request is always a
 * signature error and a genuine but replayed one a timestamp error.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const timestampText = header(headers, 'x-service-timestamp');
  if (timestampText === undefined || !/^\d{1,15}$/.test(timestampText.trim())) {
    throw new WebhookTimestampError('X-Service-Timestamp is missing or not a whole number of seconds.');
  }
  const timestamp = Number(timestampText.trim());
  const signature = header(headers, 'x-service-signature')?.trim();
  if (!signature) throw new WebhookSignatureError('X-Service-Signature is missing.');
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('verifyWebhook needs the signing secret (whsec_…).');
  }
  const message = `${timestamp}.${body}`;
  let valid = false;
  for (const key of secrets) {
    const expected = `sha256=${createHmac('sha256', key).update(message, 'utf8').digest('hex')}`;
    if (matches(expected, signature)) valid = true;
  }
  if (!valid) throw new WebhookSignatureError('X-Service-Signature does not match the body and timestamp.');
  const nowMs = options.now === undefined ? Date.now() : new Date(options.now).getTime();
  const age = Math.abs(Math.floor(nowMs / 1000) - timestamp);
  if (age > toleranceSeconds) {
    throw new WebhookTimestampError(
      `X-Service-Timestamp is ${age} s away from now; more than ${toleranceSeconds} s is refused (replay protection).`,
    );
  }
  let event: WebhookEvent;
  try {
    event = JSON.parse(body) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The signed body is not JSON.');
  }
  const eventId = header(headers, 'x-service-event-id');
  if (eventId !== undefined && eventId !== event.event_id) {
    throw new WebhookSignatureError('X-Service-Event-Id does not match the signed event_id.');
  }
  return event;
}
