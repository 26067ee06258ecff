import { CURRENCY_EXPONENTS, isCurrency } from '../domain/money.ts';

const NBSP = '\u00a0';

/** Exact money text from minor units: "KES 1,500.50", "UGX 25,000". */
export function formatMoney(minor: bigint, currency: string): string {
  const exponent = isCurrency(currency) ? CURRENCY_EXPONENTS[currency] : 2;
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : digits.slice(0, -exponent);
  const fraction = exponent === 0 ? '' : `.${digits.slice(-exponent)}`;
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency}${NBSP}${negative ? '-' : ''}${grouped}${fraction}`;
}

const DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** "3 March 2026, 14:05 UTC": pages state the zone rather than guess the reader's. */
export function formatDateTime(date: Date): string {
  return `${DATE_TIME.format(date)} UTC`;
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
