import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult } from './db.ts';

const INT8 = 20;

type PgliteLike = Pick<PGlite, 'query' | 'exec'>;

function wrap(target: PgliteLike): Queryable {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      const result = await target.query<T>(sql, params as unknown[]);
      // PGlite reports affectedRows 0 for a SELECT; pg's rowCount is the number of rows returned.
      return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}

/** Embedded PostgreSQL (WASM): a data folder, or memory when dataDir is undefined. */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  const pg = await PGlite.create(dataDir, { parsers: { [INT8]: (value: string) => BigInt(value) } });
  const base = wrap(pg);
  return {
    kind: 'pglite',
    ...base,
    // PGlite runs one transaction at a time, so concurrent callers queue here rather than interleave.
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    close: () => pg.close(),
  };
}
