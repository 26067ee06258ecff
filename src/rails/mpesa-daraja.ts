import type { Clock } from '../domain/clock.ts';
import type { CollectionRail, CollectionRequest, CollectionStart } from './collection.ts';

/**
 * Live M-Pesa through Safaricom's Daraja API, Lipa na M-Pesa Online (STK Push): an OAuth token,
 * then a push to the buyer's handset; the result arrives later on the callback URL
 * (mpesa-callback.ts parses it). Secrets (consumer key and secret, passkey, access token) go
 * only into request headers and the push's Password, never into a result, error or log line.
 */
export const DARAJA_SANDBOX_URL = 'https://sandbox.safaricom.co.ke';
export const DARAJA_PRODUCTION_URL = 'https://api.safaricom.co.ke';

export interface DarajaConfig {
  consumerKey: string;
  consumerSecret: string;
  /** The paybill number (BusinessShortCode and PartyB). */
  shortcode: string;
  /** The Lipa na M-Pesa Online passkey of the shortcode. */
  passkey: string;
  /** Daraja's base URL without a trailing slash: the sandbox by default. */
  baseUrl: string;
  /** Base of the callback URL Daraja posts results to, when not PUBLIC_URL. */
  callbackBaseUrl?: string;
  /** Each request to Daraja must answer within this long (DARAJA_REQUEST_TIMEOUT_MS by default). */
  requestTimeoutMs?: number;
}

/** Each request to Daraja (token, push) must answer within this long. */
export const DARAJA_REQUEST_TIMEOUT_MS = 15_000;

/**
 * How long a live push waits for Daraja's callback before the attempt fails as timed out. The
 * handset's prompt lapses after about a minute and Daraja then calls back itself (1037); the
 * margin keeps the service's own timeout from overtaking a late, genuine result.
 */
export const DARAJA_RESULT_TIMEOUT_SECONDS = 180;

/** A token is renewed this long before Daraja says it expires (it lives 3599 s). */
const TOKEN_MARGIN_SECONDS = 60;

/** Daraja's time stamp, YYYYMMDDHHmmss in Nairobi time (EAT), which the Password also signs. */
export function darajaTimestamp(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Africa/Nairobi',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}${part('month')}${part('day')}${part('hour')}${part('minute')}${part('second')}`;
}

export function darajaPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`).toString('base64');
}

/** A failure to report as the attempt's result; its message is safe to show the buyer. */
class RailFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Daraja's answer to a push: accepted, or refused (with its own error), or a stale token. */
type PushAnswer = { accepted: string } | { refused: RailFailure } | { tokenRejected: true };

function failed(code: string, message: string): CollectionStart {
  return { status: 'failed', railReference: null, code, message };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** The checks Daraja's fields need, answered before anything is sent. */
function refusal(request: CollectionRequest): CollectionStart | undefined {
  if (request.method !== 'mobile_money') {
    return failed('rail_error', 'M-Pesa takes mobile-money payments only.');
  }
  if (request.currency !== 'KES') {
    return failed(
      'currency_not_supported',
      `M-Pesa takes payments in KES only; this payment is in ${request.currency}.`,
    );
  }
  if (request.amountMinor <= 0n || request.amountMinor % 100n !== 0n) {
    return failed(
      'amount_not_supported',
      'M-Pesa takes whole shillings only; this amount has cents, so it cannot be paid by M-Pesa.',
    );
  }
  if (!/^\+?254\d{9}$/.test(request.phone ?? '')) {
    return failed('invalid_phone', 'M-Pesa takes Kenyan phone numbers only: +254 and 9 digits.');
  }
  return undefined;
}

export interface MpesaDarajaOptions {
  config: DarajaConfig;
  /** The full URL Daraja posts the result to, secret path token included. */
  callbackUrl: string;
  clock: Clock;
}

export class MpesaDaraja implements CollectionRail {
  readonly name = 'mpesa_daraja';
  readonly resultTimeoutSeconds = DARAJA_RESULT_TIMEOUT_SECONDS;
  private readonly config: DarajaConfig;
  private readonly callbackUrl: string;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private token: { value: string; renewAt: number } | undefined;
  /** One token request at a time: pushes started together share it. */
  private fetching: Promise<string> | undefined;

  constructor(options: MpesaDarajaOptions) {
    this.config = options.config;
    this.callbackUrl = options.callbackUrl;
    this.clock = options.clock;
    this.timeoutMs = options.config.requestTimeoutMs ?? DARAJA_REQUEST_TIMEOUT_MS;
  }

  async start(request: CollectionRequest): Promise<CollectionStart> {
    const refused = refusal(request);
    if (refused) return refused;
    try {
      let answer = await this.push(request, await this.accessToken());
      if ('tokenRejected' in answer) {
        // Daraja revoked the token before its time: drop it and try once with a fresh one.
        this.token = undefined;
        answer = await this.push(request, await this.accessToken());
      }
      if ('accepted' in answer) return { status: 'pending', railReference: answer.accepted };
      if ('refused' in answer) throw answer.refused;
      throw new RailFailure('rail_error', 'M-Pesa did not accept its access token.');
    } catch (error) {
      if (error instanceof RailFailure) return failed(error.code, error.message);
      throw error;
    }
  }

  private async accessToken(): Promise<string> {
    const now = this.clock.now().getTime();
    if (this.token && now < this.token.renewAt) return this.token.value;
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async fetchToken(): Promise<string> {
    const basic = Buffer.from(`${this.config.consumerKey}:${this.config.consumerSecret}`).toString('base64');
    const { status, body } = await this.call('/oauth/v1/generate?grant_type=client_credentials', {
      method: 'GET',
      headers: { authorization: `Basic ${basic}` },
    });
    const value = text(body.access_token);
    if (status !== 200 || !value) {
      throw new RailFailure('rail_error', `M-Pesa refused the service's credentials${detail(body, status)}.`);
    }
    const lifetime = Number(text(body.expires_in) ?? 0);
    const keep = Number.isFinite(lifetime) ? Math.max(0, lifetime - TOKEN_MARGIN_SECONDS) : 0;
    this.token = { value, renewAt: this.clock.now().getTime() + keep * 1000 };
    return value;
  }

  private async push(request: CollectionRequest, token: string): Promise<PushAnswer> {
    const timestamp = darajaTimestamp(this.clock.now());
    const msisdn = (request.phone ?? '').replace(/^\+/, '');
    const { status, body } = await this.call('/mpesa/stkpush/v1/processrequest', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        BusinessShortCode: this.config.shortcode,
        Password: darajaPassword(this.config.shortcode, this.config.passkey, timestamp),
        Timestamp: timestamp,
        TransactionType: 'CustomerPayBillOnline',
        Amount: Number(request.amountMinor / 100n),
        PartyA: msisdn,
        PartyB: this.config.shortcode,
        PhoneNumber: msisdn,
        CallBackURL: this.callbackUrl,
        // Shown on the handset and the statement: at most 12 characters, the attempt id's tail.
        AccountReference: request.attemptId.slice(-12),
        TransactionDesc:
          request.description
            .replace(/[^A-Za-z0-9 ]/g, '')
            .trim()
            .slice(0, 13) || 'Payment',
      }),
    });
    const checkoutRequestId = text(body.CheckoutRequestID);
    if (status === 200 && text(body.ResponseCode) === '0' && checkoutRequestId) {
      return { accepted: checkoutRequestId };
    }
    if (status === 401 || text(body.errorCode) === '404.001.03') return { tokenRejected: true };
    return {
      refused: new RailFailure('rail_error', `M-Pesa refused the payment request${detail(body, status)}.`),
    };
  }

  /** One request to Daraja with the timeout; its JSON body, {} when it has none. */
  private async call(
    path: string,
    init: RequestInit,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    let response: Response;
    try {
      response = await fetch(`${this.config.baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      throw new RailFailure(
        'rail_error',
        timedOut ? 'M-Pesa did not answer in time. Try again in a moment.' : 'M-Pesa could not be reached.',
      );
    }
    let body: unknown = {};
    try {
      body = await response.json();
    } catch {
      // Not JSON (a gateway's HTML error page): judged by the status alone.
    }
    return {
      status: response.status,
      body: body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {},
    };
  }
}

/** Daraja's own words for a refusal: ': errorMessage (errorCode)', or the HTTP status. */
function detail(body: Record<string, unknown>, status: number): string {
  const message = text(body.errorMessage) ?? text(body.ResponseDescription);
  const code = text(body.errorCode) ?? text(body.ResponseCode);
  if (message) return `: ${message}${code ? ` (${code})` : ''}`;
  return ` (HTTP ${status})`;
}
