/**
 * A real `safehold serve` in its own process, on PGlite (a fresh temp folder) or PostgreSQL (a
 * fresh database), with a CLI-made merchant whose rate limit is raised so the benchmark measures
 * the work, not the limiter.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../src/store/db.ts';
import { openDatabase } from '../../src/store/open.ts';
import { backendPids, createDatabase } from './postgres.ts';
import { CLI, freePort, onCleanup, runCli, startProcess } from './processes.ts';

export type DatabaseKind = 'pglite' | 'postgres';

export interface RunningServer {
  kind: DatabaseKind;
  url: string;
  child: ChildProcess;
  /** The tail of what the server printed. */
  output: () => string;
  /** The merchant's test key, as an Authorization header. */
  headers: Record<string, string>;
  /** Process ids of the database backends serving this server (PostgreSQL on this machine). */
  dbPids?: () => Promise<number[]>;
  /** Opens the server's database from this process; for PGlite, only once the server has stopped. */
  openDb: () => Promise<Db>;
  /** Removes the temp folder or drops the database. */
  cleanup: () => Promise<void>;
}

export function serverEnv(port: number, database: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', ...database };
  delete env.REDIS_URL; // in-process rate limit: the benchmarks measure the service, not Redis
  delete env.DATABASE_SCHEMA;
  if (!('DATABASE_URL' in database)) delete env.DATABASE_URL;
  return env;
}

/** `merchant create --json`, then `merchant rate-limit ID 100000000`; returns the test key. */
export async function merchantKey(env: NodeJS.ProcessEnv): Promise<string> {
  const created = JSON.parse(
    await runCli(env, [
      'merchant',
      'create',
      '--name',
      'Bench Merchant',
      '--email',
      'bench@example.com',
      '--json',
    ]),
  ) as { merchant_id: string; test_key: string };
  await runCli(env, ['merchant', 'rate-limit', created.merchant_id, '100000000']);
  return created.test_key;
}

/**
 * Starts `safehold serve` (API and worker in one process, LOG_LEVEL=warn, no REDIS_URL, the
 * shipped pool size) on a fresh database, after making the merchant with the CLI (a running server
 * holds a PGlite folder), and waits for /healthz.
 */
export async function startSafehold(
  kind: DatabaseKind,
  extraEnv: Record<string, string> = {},
): Promise<RunningServer> {
  const port = await freePort();
  const start = async (
    database: Record<string, string>,
    access: Pick<RunningServer, 'dbPids' | 'openDb' | 'cleanup'>,
  ): Promise<RunningServer> => {
    const env = { ...serverEnv(port, database), ...extraEnv };
    const key = await merchantKey(env);
    const server = await startProcess(CLI, ['serve'], env, port);
    return { kind, ...server, headers: { authorization: `Bearer ${key}` }, ...access };
  };
  if (kind === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'safehold-bench-'));
    const cleanup = async () => rmSync(dir, { recursive: true, force: true });
    onCleanup(cleanup);
    return start(
      { DATA_DIR: dir },
      { openDb: () => openDatabase({ databaseUrl: undefined, dataDir: dir }), cleanup },
    );
  }
  const db = await createDatabase();
  return start(
    { DATABASE_URL: db.url },
    {
      dbPids: () => backendPids(db.name),
      openDb: () => openDatabase({ databaseUrl: db.url, dataDir: undefined, poolSize: 4 }),
      cleanup: db.drop,
    },
  );
}
