import { randomBytes } from 'node:crypto';

/** Every identifier the service issues, by the kind of thing it names (resolutions 1). */
export const ID_PREFIXES = {
  transaction: 'txn',
  paymentLink: 'plink',
  dispute: 'dsp',
  evidence: 'evd',
  refund: 'rfd',
  payout: 'po',
  event: 'evt',
  webhookEndpoint: 'we',
  apiKey: 'key',
  merchant: 'mch',
  request: 'req',
  // Internal records, never shown by the API.
  ledgerEntry: 'le',
  job: 'job',
  paymentAttempt: 'pa',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Crockford base32: sortable as plain strings, no ambiguous letters.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/**
 * A new id: prefix, 48-bit millisecond time (so ids sort by creation) and 80 random bits
 * (16 symbols of 5 bits), so ids cannot be guessed or enumerated.
 */
export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(nowMs)}${encodeRandom(randomBytes(16))}`;
}

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(`${ID_PREFIXES[kind]}_`);
}
