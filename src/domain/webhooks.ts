/** Webhook rules (spec 6, resolutions 9): event types, the retry schedule, and who gets an event. */

/** Every event type the service sends (resolutions 9). */
export const EVENT_TYPES = [
  'transaction.created',
  'transaction.paid',
  'transaction.status_changed',
  'transaction.completed',
  'dispute.opened',
  'dispute.updated',
  'dispute.resolved',
  'refund.succeeded',
  'refund.failed',
  'payout.paid',
  'payout.failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Waits before the 2nd, 3rd, 4th and 5th attempt (spec 6.2, 8: the schedule table wins). */
export const RETRY_DELAYS_SECONDS = [60, 5 * 60, 30 * 60, 2 * 60 * 60] as const;

/** Five attempts in all: the first and the four retries. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** At most one failing-endpoint alert per endpoint (or callback origin) in this long. */
export const ALERT_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** Events are kept this long, then purged with their deliveries. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * When the attempt after attempt `number` (1-based) is due, counted from when that attempt was
 * made; null when it was the last.
 */
export function nextAttemptAt(number: number, attemptedAt: Date): Date | null {
  const delay = RETRY_DELAYS_SECONDS[number - 1];
  return delay === undefined ? null : new Date(attemptedAt.getTime() + delay * 1000);
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

export function endpointWants(enabledEvents: readonly string[], type: string): boolean {
  return enabledEvents.includes('*') || enabledEvents.includes(type);
}

/** scheme://host:port of a URL: what a callback_url's failing state and concurrency are kept by. */
export function urlOrigin(url: string): string {
  return new URL(url).origin;
}

export interface EndpointTarget {
  id: string;
  url: string;
  enabled_events: readonly string[];
}

export interface DeliveryTarget {
  endpointId: string | null;
  url: string;
  /** What concurrency is bounded by: the endpoint, or the callback URL's origin. */
  targetKey: string;
}

/**
 * Where one event goes: the transaction's callback_url (every event of the transaction), and every
 * enabled endpoint of the merchant and environment that wants its type. A callback_url that is
 * also such an endpoint's URL gets the event once, through the endpoint.
 */
export function deliveryTargets(
  type: string,
  callbackUrl: string | null,
  endpoints: readonly EndpointTarget[],
): DeliveryTarget[] {
  const targets: DeliveryTarget[] = endpoints
    .filter((e) => endpointWants(e.enabled_events, type))
    .map((e) => ({ endpointId: e.id, url: e.url, targetKey: e.id }));
  if (callbackUrl && !targets.some((t) => t.url === callbackUrl)) {
    targets.push({ endpointId: null, url: callbackUrl, targetKey: callbackTargetKey(callbackUrl) });
  }
  return targets;
}

export function callbackTargetKey(url: string): string {
  return `callback:${urlOrigin(url)}`;
}
