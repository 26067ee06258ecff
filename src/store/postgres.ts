import { createHash } from 'node:crypto';
import pg from 'pg';
import { type Db, isUniqueViolation, type Queryable, type QueryResult } from './db.ts';

const INT8 = 20;

export interface PostgresOptions {
  connectionString: string;
  /** Schema to use instead of public (tests isolate each run in its own). */
  schema?: string;
  poolSize?: number;
}

/**
 * Prepared statements. Every query runs as a named prepared statement, so each connection parses
 * and plans a given SQL text once instead of on every call (about a third of the database's CPU per
 * create; see bench/README.md). The name is a hash of the text. SQL texts are constants or a small
 * set of templates, with every value passed as a parameter, so each connection holds few of them.
 *
 * PostgreSQL refuses to run a prepared statement whose result columns have changed since it was
 * prepared ("cached plan must not change result type"): after another process's migration adds a
 * column to a table read with `*`. The pool's names then move to a new generation, so every
 * connection prepares afresh; a single statement is retried once, a transaction fails once and is
 * not retried (its function may have done more than SQL).
 */
class Statements {
  private generation = 0;
  private readonly names = new Map<string, string>();

  nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) {
      name = `s${this.generation}_${createHash('sha256').update(sql).digest('base64url').slice(0, 22)}`;
      this.names.set(sql, name);
    }
    return name;
  }

  /** True (and the names renewed) when the error is a stale prepared statement. */
  renewIfStale(error: unknown): boolean {
    const stale =
      error instanceof Error &&
      (error as { code?: unknown }).code === '0A000' &&
      error.message.includes('cached plan must not change result type');
    if (stale) {
      this.generation += 1;
      this.names.clear();
    }
    return stale;
  }
}

function wrap(client: pg.Pool | pg.PoolClient, statements: Statements, inTransaction: boolean): Queryable {
  const run = async <T>(sql: string, params: readonly unknown[]): Promise<QueryResult<T>> => {
    const result = await client.query({
      name: statements.nameOf(sql),
      text: sql,
      values: params as unknown[],
    });
    return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
  };
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      try {
        return await run<T>(sql, params);
      } catch (error) {
        if (!statements.renewIfStale(error) || inTransaction) throw error;
        return run<T>(sql, params);
      }
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (error) {
    // IF NOT EXISTS is not atomic: of two processes creating it at once, one fails on the catalogue's
    // unique index. The schema then exists, which is all we asked for.
    if (!isUniqueViolation(error)) throw error;
  }
}

export async function openPostgres(options: PostgresOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 20,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8
          ? (value: string) => BigInt(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  if (options.schema) {
    await createSchema(pool, options.schema).catch(async (error: unknown) => {
      await pool.end();
      throw error;
    });
  }
  const statements = new Statements();
  const base = wrap(pool, statements, false);
  return {
    kind: 'postgres',
    ...base,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client, statements, true));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
