/**
 * Keyset paging shared by every list: cursors are ids (or another time-sortable key), newest
 * first. starting_after reads older rows (`key < cursor`, descending); ending_before reads newer
 * ones (`key > cursor`, ascending, then reversed so the page is still newest first). One extra row
 * is fetched to tell has_more.
 */
export interface PageFilter {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/** WHERE conditions with numbered parameters: `add('status = ?', v)` writes `status = $3`. */
export interface Conditions {
  readonly where: string[];
  readonly params: unknown[];
  add(clause: string, value: unknown): void;
}

/** Conditions that start from fixed ones whose parameters ($1, $2 …) are already given. */
export function conditions(where: string[] = [], params: unknown[] = []): Conditions {
  return {
    where,
    params,
    add(clause, value) {
      params.push(value);
      where.push(clause.replaceAll('?', `$${params.length}`));
    },
  };
}

export interface KeysetPage {
  /** The ORDER BY direction of the key for this page. */
  order: 'ASC' | 'DESC';
  /** The placeholder of the LIMIT parameter (one more than the page). */
  limit: string;
  /** The rows as read, cut to the page and put newest first. */
  page<T>(rows: T[]): Page<T>;
}

/**
 * Adds the cursor condition on `key` and the LIMIT parameter, last, to the conditions. A filter
 * with both cursors pages after starting_after (operations refuse both before they get here).
 */
export function keysetPage(c: Conditions, key: string, filter: PageFilter): KeysetPage {
  const backwards = filter.endingBefore !== undefined && filter.startingAfter === undefined;
  if (filter.startingAfter !== undefined) c.add(`${key} < ?`, filter.startingAfter);
  else if (filter.endingBefore !== undefined) c.add(`${key} > ?`, filter.endingBefore);
  c.params.push(filter.limit + 1);
  return {
    order: backwards ? 'ASC' : 'DESC',
    limit: `$${c.params.length}`,
    page<T>(rows: T[]): Page<T> {
      const page = rows.slice(0, filter.limit);
      return { rows: backwards ? page.reverse() : page, hasMore: rows.length > filter.limit };
    },
  };
}
