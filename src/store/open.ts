import { lockDataDir } from './data-dir-lock.ts';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export interface OpenOptions {
  databaseUrl: string | undefined;
  /** PGlite folder; undefined (with no databaseUrl) means an in-memory database. */
  dataDir: string | undefined;
  /** PostgreSQL schema to work in (tests). */
  schema?: string;
  poolSize?: number;
}

/** PostgreSQL when a URL is given, else PGlite (locked against a second process). */
export async function openDatabase(options: OpenOptions): Promise<Db> {
  if (options.databaseUrl) {
    return openPostgres({
      connectionString: options.databaseUrl,
      schema: options.schema,
      poolSize: options.poolSize,
    });
  }
  if (options.dataDir === undefined) return openPglite(undefined);
  const unlock = lockDataDir(options.dataDir);
  try {
    const db = await openPglite(options.dataDir);
    return {
      ...db,
      close: async () => {
        try {
          await db.close();
        } finally {
          unlock();
        }
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
