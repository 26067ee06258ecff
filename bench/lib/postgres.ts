/**
 * Throw-away PostgreSQL databases for the benchmarks: created beside the database of the admin
 * URL and dropped at the end (or on Ctrl-C).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanup } from './processes.ts';

/** BENCH_DATABASE_URL, else DATABASE_URL, else the local server's postgres database. */
export const ADMIN_URL =
  process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>, url = ADMIN_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export interface BenchDatabase {
  name: string;
  /** The admin URL with this database's name. */
  url: string;
  drop(): Promise<void>;
}

/**
 * CREATE DATABASE safehold_bench_<random> (a copy of `template` when given), dropped with
 * DROP DATABASE … WITH (FORCE) by drop() or at the end of the run (unless kept).
 */
export async function createDatabase(
  options: { template?: string; prefix?: string; keep?: boolean } = {},
): Promise<BenchDatabase> {
  const name = `${options.prefix ?? 'safehold_bench'}_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) =>
    admin.query(`CREATE DATABASE ${name}${options.template ? ` TEMPLATE ${options.template}` : ''}`),
  );
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  if (!options.keep) onCleanup(drop);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop };
}

/** Process ids of the backends connected to a database (other than the asking one). */
export async function backendPids(database: string): Promise<number[]> {
  return withAdmin(async (admin) => {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return rows.map((r) => r.pid);
  });
}

/**
 * pgbench TPC-B (scale 10, 32 clients, 2 threads) on a throw-away database: how much database
 * work the machine does at the moment, to put the benchmark's figures in context.
 */
export async function pgbenchTps(seconds = 10): Promise<number | undefined> {
  const db = await createDatabase({ prefix: 'safehold_pgbench' });
  try {
    const url = db.url;
    const init = spawnSync('pgbench', ['-i', '-s', '10', '-q', url], { encoding: 'utf8' });
    if (init.status !== 0) return undefined;
    const run = spawnSync('pgbench', ['-c', '32', '-j', '2', '-T', String(seconds), url], {
      encoding: 'utf8',
    });
    const match = /tps = ([\d.]+)/.exec(run.stdout ?? '');
    return match ? Number(match[1]) : undefined;
  } finally {
    await db.drop();
  }
}
