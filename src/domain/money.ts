import { invalid } from './errors.ts';
/**
 * Money rules. Amounts cross the API as JSON numbers in major units and are held as bigint
 * minor units everywhere else; no float arithmetic touches an amount.
 */

/** Supported currencies and their ISO 4217 exponent (resolutions 1). */
export const CURRENCY_EXPONENTS = {
  KES: 2,
  UGX: 0,
  TZS: 2,
  RWF: 0,
  GHS: 2,
  NGN: 2,
  ZAR: 2,
  XOF: 0,
  XAF: 0,
  USD: 2,
  EUR: 2,
  GBP: 2,
} as const;

export type Currency = keyof typeof CURRENCY_EXPONENTS;
export const CURRENCIES = Object.keys(CURRENCY_EXPONENTS) as Currency[];
export const MAX_AMOUNT_MAJOR = 1_000_000_000;

export function isCurrency(code: string): code is Currency {
  return Object.hasOwn(CURRENCY_EXPONENTS, code);
}

export type ParsedAmount = { ok: true; minor: bigint } | { ok: false; reason: string };

/**
 * Converts a major-unit JSON number to minor units through its shortest decimal text, which
 * JavaScript guarantees round-trips, so 1500.1 becomes 150010n exactly.
 */
export function toMinorUnits(amount: number, currency: Currency): ParsedAmount {
  const exponent = CURRENCY_EXPONENTS[currency];
  if (!Number.isFinite(amount) || amount <= 0) return { ok: false, reason: 'must be greater than 0' };
  if (amount > MAX_AMOUNT_MAJOR) return { ok: false, reason: `must be at most ${MAX_AMOUNT_MAJOR}` };
  const text = String(amount);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, reason: `has more than ${exponent} decimal places for ${currency}` };
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) {
    return {
      ok: false,
      reason:
        exponent === 0
          ? `must be a whole number for ${currency}`
          : `has more than ${exponent} decimal places for ${currency}`,
    };
  }
  return { ok: true, minor: BigInt(whole + fraction.padEnd(exponent, '0')) };
}

/** Minor units back to a major-unit number for JSON (exact for every amount the API accepts). */
export function toMajorUnits(minor: bigint, currency: Currency): number {
  const exponent = CURRENCY_EXPONENTS[currency];
  if (exponent === 0) return Number(minor);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const text = `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return (negative ? -1 : 1) * Number(text);
}

/** A request's major-unit amount in minor units of `currency`, or 400 naming the field `param`. */
export function minorAmountParam(amount: number, currency: string, param: string): bigint {
  const parsed = toMinorUnits(amount, currency as Currency);
  if (!parsed.ok) throw invalid(param, `${param} ${parsed.reason}.`);
  return parsed.minor;
}
