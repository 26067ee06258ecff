/** Small helpers for the benchmarks' figures and tables. */

/** The p-th percentile (0-100) of samples, nearest rank; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

/** A fixed-width text table: the first column left-aligned, the others right-aligned. */
export function table(columns: ReadonlyArray<readonly [string, number]>, rows: string[][]): string {
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(columns[i]?.[1] ?? 0) : cell.padStart(columns[i]?.[1] ?? 0)))
      .join('');
  return [line(columns.map(([title]) => title)), ...rows.map(line)].join('\n');
}

export const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);

export const percent = (value: number | undefined) => (value === undefined ? '-' : `${value.toFixed(0)}%`);

/** min-max of values, rounded. */
export const spread = (values: readonly number[], digits = 0) =>
  values.length === 0 ? '-' : `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;
