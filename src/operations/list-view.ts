import { invalid } from '../domain/errors.ts';
import type { PageFilter } from '../store/paging.ts';

/** The answer of every list endpoint (the schema side is listOf in src/schemas/common.ts). */
export interface ListView<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The paging fields every list query has (ListQueryBase). */
export interface ListQuery {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
}

/** The store's page filter for a list query: 20 a page by default, and at most one cursor. */
export function pageFilterOf(query: ListQuery): PageFilter {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw invalid(
      'ending_before',
      'Give starting_after or ending_before, not both: they page in opposite directions.',
    );
  }
  return { limit: query.limit ?? 20, startingAfter: query.starting_after, endingBefore: query.ending_before };
}

/** The schema's date-time format admits forms Date cannot read (a leap second: 23:59:60). */
export function instant(text: string | undefined, param: string): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw invalid(param, `${param} must be a valid date-time.`);
  return date;
}

export function listView<T>(data: T[], hasMore: boolean): ListView<T> {
  return { object: 'list', data, has_more: hasMore };
}
