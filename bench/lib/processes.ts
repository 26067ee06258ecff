/**
 * Child processes for the benchmarks: servers started as their own processes (so the load
 * generator in the runner never takes their event loop), the CLI, and clean-up on exit or Ctrl-C.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'bin', 'safehold.js');
/** The Node that runs this script (the pinned Node 24 when started through npm). */
export const NODE = process.execPath;

const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void>> = [];

/** Runs at shutdown (after the child processes have stopped), in the order registered. */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

/** Runs a `safehold` CLI command to completion and returns what it printed on stdout. */
export function runCli(env: NodeJS.ProcessEnv, argv: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(NODE, [CLI, ...argv], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0 ? ok(out) : fail(new Error(`safehold ${argv.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

export interface Spawned {
  child: ChildProcess;
  /** The last few KB of what it printed (stdout and stderr), to explain a failure. */
  output: () => string;
}

/** Starts a Node script as a child process (with an IPC channel when asked) and keeps its output's tail. */
export function spawnScript(
  script: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  options: { ipc?: boolean } = {},
): Spawned {
  const child = spawn(NODE, [script, ...argv], {
    env,
    cwd: ROOT,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', () => children.delete(child));
  return { child, output: () => output };
}

/** Starts a server process and waits until GET /healthz answers. */
export async function startProcess(
  script: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<Spawned & { url: string }> {
  const { child, output } = spawnScript(script, argv, env);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited ${child.exitCode}: ${output()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return { child, url, output };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${script} did not answer /healthz within 60 s: ${output()}`);
}

/** SIGTERM (graceful shutdown), then SIGKILL if it has not exited within 15 s. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

async function shutdown(): Promise<void> {
  await Promise.allSettled([...children].map(stopProcess));
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {});
}

/**
 * Runs a benchmark's main function: on failure prints why and exits 1; in every case (Ctrl-C
 * included) stops the child processes and runs the clean-ups (temp folders, benchmark databases).
 */
export async function runBenchmark(name: string, main: () => Promise<void>): Promise<void> {
  process.on('SIGINT', () => {
    void shutdown().then(() => process.exit(130));
  });
  try {
    await main();
  } catch (error) {
    process.stderr.write(`${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await shutdown();
  }
}
