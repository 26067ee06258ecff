import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Db } from '../../src/store/db.ts';
import { openDatabase } from '../../src/store/open.ts';

/** The repository root, and the Node pinned in node_modules (the system Node cannot run the sources). */
export const ROOT = resolve(import.meta.dirname, '../..');
export const NODE = join(ROOT, 'node_modules/.bin/node');
const BIN = join(ROOT, 'bin/safehold.js');

/** Settings a child must never inherit from the test run unless a test passes them on purpose. */
const SAFEHOLD_VARS = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATABASE_SCHEMA',
  'DATA_DIR',
  'REDIS_URL',
  'PUBLIC_URL',
  'LOG_LEVEL',
  'SAFEHOLD_SECRET',
  'RATE_LIMIT_PER_MINUTE',
  'PAYMENT_WINDOW_SECONDS',
  'NODE_TEST_CONTEXT',
];

export type Env = Record<string, string | undefined>;

export function childEnv(env: Env): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SAFEHOLD_VARS) delete base[name];
  return { ...base, ...env };
}

/**
 * A fresh, empty database for child processes: its own PostgreSQL schema when DATABASE_URL is set
 * (or `kind` asks for it), else a new PGlite folder under the system temp directory.
 */
export interface TestDatabase {
  kind: 'pglite' | 'postgres';
  /** DATA_DIR, or DATABASE_URL and DATABASE_SCHEMA, for a child's environment. */
  env: Env;
  /** Opens the database from this process (for PGlite only while no child holds the folder). */
  open(): Promise<Db>;
  drop(): Promise<void>;
}

export async function freshDatabase(
  kind: 'pglite' | 'postgres' = process.env.DATABASE_URL ? 'postgres' : 'pglite',
): Promise<TestDatabase> {
  if (kind === 'postgres') {
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) throw new Error('freshDatabase("postgres") needs DATABASE_URL');
    const schema = `e2e_${randomBytes(6).toString('hex')}`;
    const open = () => openDatabase({ databaseUrl, dataDir: undefined, schema });
    return {
      kind,
      env: { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema },
      open,
      async drop() {
        const db = await open();
        try {
          await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await db.close();
        }
      },
    };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'safehold-test-'));
  return {
    kind,
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ databaseUrl: undefined, dataDir }),
    drop: () => rm(dataDir, { recursive: true, force: true }),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/** Runs `node bin/safehold.js <args>` to completion. */
export function runCli(args: string[], env: Env): Promise<CliResult> {
  const child = spawn(NODE, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = collect(child);
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout: out.stdout(), stderr: out.stderr() }));
  });
}

/** Runs a CLI command with --json that must succeed, and returns what it printed. */
export async function cliJson<T = Record<string, unknown>>(args: string[], env: Env): Promise<T> {
  const result = await runCli([...args, '--json'], env);
  if (result.code !== 0) {
    throw new Error(`safehold ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  }
  return JSON.parse(result.stdout) as T;
}

/** What the first start of a server on an empty database prints. */
export interface DemoKeys {
  merchantId: string;
  testKey: string;
  liveKey: string;
  operatorKey: string;
  /** The ready-to-run curl command, backslash continuations included. */
  curl: string;
}

export interface RunningServer {
  /** The URL from the banner "Safehold is listening on <url>". */
  url: string;
  /** Present only when this start printed the first-start banner. */
  demo: DemoKeys | undefined;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited, with its exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Sends SIGTERM to the whole process group (as Ctrl-C reaches npm and the server under `npm start`)
   * and waits until every process of the group has exited. Returns the direct child's exit.
   */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number): Promise<void> {
  for (let waited = 0; groupAlive(pgid); waited += 50) {
    if (waited > 60_000) throw new Error(`process group ${pgid} did not exit after SIGTERM`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const BANNER = /Safehold is listening on (\S+)/;
const FIRST_START_WAIT_MS = 90_000;

function field(text: string, label: string): string | undefined {
  return new RegExp(`^ {2}${label}:\\s+(\\S+)`, 'm').exec(text)?.[1];
}

function parseDemo(text: string): DemoKeys | undefined {
  const merchantId = field(text, 'merchant id');
  const testKey = field(text, 'test key');
  const liveKey = field(text, 'live key');
  const operatorKey = field(text, 'operator key');
  const curl = /^ {2}curl [\s\S]*?-d '[^']*'$/m.exec(text)?.[0];
  if (!merchantId || !testKey || !liveKey || !operatorKey || !curl) return undefined;
  return { merchantId, testKey, liveKey, operatorKey, curl: curl.trim() };
}

/**
 * Starts the real server (by default `node bin/safehold.js serve`; pass command/args for `npm start`)
 * with PORT=0 and waits for its banner. The first-start block is printed right after the banner line.
 */
export async function startServer(
  env: Env,
  options: { command?: string; args?: string[] } = {},
): Promise<RunningServer> {
  const child = spawn(options.command ?? NODE, options.args ?? [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const out = collect(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolvePromise) => {
    child.on('exit', (code, signal) => resolvePromise({ code, signal }));
  });
  let stopped = false;
  const stop = async () => {
    if (!stopped && child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      stopped = true;
      process.kill(-child.pid, 'SIGTERM');
    }
    const result = await exited;
    // Under `npm start` the server is a grandchild that may outlive npm: wait for the whole group.
    if (child.pid !== undefined) await groupGone(child.pid);
    return result;
  };
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`server did not start:\n${out.stdout()}\n${out.stderr()}`));
    }, FIRST_START_WAIT_MS);
    const check = () => {
      const match = BANNER.exec(out.stdout());
      // The demo block follows the banner in the same write; wait for the whole line at least.
      if (match && out.stdout().slice(match.index).includes('\n')) {
        clearTimeout(timer);
        resolvePromise(match[1] as string);
      }
    };
    child.stdout?.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(`server exited (${code ?? signal}) before listening:\n${out.stdout()}\n${out.stderr()}`),
      );
    });
  });
  return {
    url,
    demo: parseDemo(out.stdout()),
    child,
    stdout: out.stdout,
    stderr: out.stderr,
    exited,
    stop,
  };
}
