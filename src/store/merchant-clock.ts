import type { Queryable } from './db.ts';

/** A merchant's test clock offset in milliseconds (0 when the merchant is unknown). */
export async function findMerchantClock(q: Queryable, merchantId: string): Promise<number> {
  const { rows } = await q.query<{ test_clock_offset_ms: bigint }>(
    'SELECT test_clock_offset_ms FROM merchants WHERE id = $1',
    [merchantId],
  );
  return Number(rows[0]?.test_clock_offset_ms ?? 0n);
}

/** Moves a merchant's test clock forward; returns the new offset, or undefined for an unknown merchant. */
export async function advanceTestClock(
  q: Queryable,
  merchantId: string,
  ms: number,
): Promise<number | undefined> {
  const { rows } = await q.query<{ test_clock_offset_ms: bigint }>(
    'UPDATE merchants SET test_clock_offset_ms = test_clock_offset_ms + $2 WHERE id = $1 RETURNING test_clock_offset_ms',
    [merchantId, ms],
  );
  const offset = rows[0]?.test_clock_offset_ms;
  return offset === undefined ? undefined : Number(offset);
}
