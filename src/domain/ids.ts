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
  webhookDelivery: 'whd',
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

const RANDOM_BITS = 80n;
const RANDOM_LIMIT = 1n << RANDOM_BITS;

function encodeRandom(value: bigint): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(rest & 31n)] + out;
    rest >>= 5n;
  }
  return out;
}

function freshRandom(): bigint {
  return BigInt(`0x${randomBytes(10).toString('hex')}`);
}

// Ids made in the same millisecond by this process step up from a random start by a random 32-bit
// stride, so they sort in the order they were made (the events of one move keep their order) and
// the next one still cannot be guessed from the last.
let lastMs = -1;
let lastRandom = 0n;

/**
 * A new id: prefix, 48-bit millisecond time (so ids sort by creation) and 80 random bits
 * (16 symbols of 5 bits), so ids cannot be guessed or enumerated.
 */
export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  const stride = BigInt(randomBytes(4).readUInt32BE()) + 1n;
  if (nowMs === lastMs && lastRandom + stride < RANDOM_LIMIT) {
    lastRandom += stride;
  } else {
    lastMs = nowMs;
    lastRandom = freshRandom();
  }
  return `${ID_PREFIXES[kind]}_${encodeTime(nowMs)}${encodeRandom(lastRandom)}`;
}

/**
 * The smallest id of a kind made at or after a time: every id made before `ms` sorts below it, so
 * a range on ids is a range on creation time that an index on the id can serve (event retention).
 */
export function idTimeFloor(kind: IdKind, ms: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(ms)}`;
}

export function hasPrefix(id: string, kind: IdKind): boolean {
  return id.startsWith(`${ID_PREFIXES[kind]}_`);
}
