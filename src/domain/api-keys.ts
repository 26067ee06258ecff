import { createHash, randomBytes } from 'node:crypto';

/** Scopes a merchant key may carry (resolutions 3). A key created without a list gets them all. */
export const SCOPES = [
  'transactions:read',
  'transactions:write',
  'payment_links:write',
  'disputes:read',
  'disputes:write',
  'refunds:write',
  'payouts:read',
  'payouts:write',
  'events:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export type KeyKind = 'test' | 'live' | 'operator';

const KEY_PREFIX: Record<KeyKind, string> = { test: 'sk_test_', live: 'sk_live_', operator: 'sk_op_' };

/** Key shape: prefix plus at least 32 base62 characters. */
export const KEY_PATTERN = /^sk_(test|live|op)_[A-Za-z0-9]{32,128}$/;

/** Rotation keeps the previous key valid this long (spec 5.4). */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new secret key (shown once) with 40 base62 characters, about 238 bits. */
export function generateKey(kind: KeyKind): string {
  return KEY_PREFIX[kind] + randomBase62(40);
}

/** Keys are long random strings, so one SHA-256 is enough to store them safely; no slow hash needed. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function kindOfKey(key: string): KeyKind | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  return match[1] === 'op' ? 'operator' : (match[1] as 'test' | 'live');
}

/** The part of a key safe to show in listings and logs. */
export function keyHint(key: string): string {
  return `${key.slice(0, key.lastIndexOf('_') + 5)}…${key.slice(-4)}`;
}
