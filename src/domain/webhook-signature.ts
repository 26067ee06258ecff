import { createHmac } from 'node:crypto';
import { randomBase62 } from './api-keys.ts';

/** Signing secrets: whsec_ and 40 random base62 characters (about 238 bits). */
export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBase62(40)}`;
}

/**
 * The X-Service-Signature value (spec 6.3): `sha256=` and the lowercase hex HMAC-SHA256, keyed with
 * the signing secret, of the timestamp, a period and the raw body.
 */
export function webhookSignature(secret: string, timestamp: number, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`;
}

/** The three headers of one attempt; signed afresh for each attempt, with the real time of sending. */
export function webhookHeaders(
  secret: string,
  eventId: string,
  rawBody: string,
  timestamp: number,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Safehold-Webhooks/1',
    'x-service-signature': webhookSignature(secret, timestamp, rawBody),
    'x-service-timestamp': String(timestamp),
    'x-service-event-id': eventId,
  };
}
