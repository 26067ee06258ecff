import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so two bodies that mean the same thing hash the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The fingerprint idempotency compares: the body without its own idempotency key. */
export function requestFingerprint(body: unknown): string {
  const rest =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'idempotency_key'))
      : body;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}
