/**
 * Webhook delivery benchmark (npm run bench:webhooks). See the "Webhooks" section of bench/README.md.
 *
 * steady   `safehold serve` (API and worker in one process, as the foundation benchmark runs it)
 *          under the foundation benchmark's create load (POST /v1/transactions, 32 connections),
 *          with one webhook endpoint for every event pointing at a receiver in its own process
 *          (bench/webhook-receiver.ts).
 *          Measures creates/s, deliveries/s, and the delay from commit to the first attempt
 *          (receiver arrival minus the event's occurred_at) for the events made while measuring.
 * backlog  PostgreSQL only: `serve --role api` takes N creates with nobody delivering, then
 *          `serve --role worker` starts: how fast one worker delivers a backlog.
 * Every event must arrive; afterwards every delivery must be recorded as succeeded, or the run fails.
 *
 * Options: --targets postgres,pglite --connections 32 --duration 15 --warmup 3 --backlog 20000
 *          --phases steady,backlog --endpoints 1 (each endpoint gets every event: deliveries per create)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Db } from '../src/store/db.ts';
import { openDatabase } from '../src/store/open.ts';
import { cpuSeconds, loadAverage, percentOf, totalCpuSeconds } from './lib/cpu.ts';
import { backendPids, createDatabase, postgresReachable } from './lib/postgres.ts';
import {
  CLI,
  freePort,
  ROOT,
  runBenchmark,
  spawnScript,
  startProcess,
  stopProcess,
} from './lib/processes.ts';
import { type DatabaseKind, merchantKey, serverEnv, startSafehold } from './lib/safehold.ts';
import { fixed, percent, percentile, table } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    targets: { type: 'string', default: 'postgres,pglite' },
    phases: { type: 'string', default: 'steady,backlog' },
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    backlog: { type: 'string', default: '20000' },
    endpoints: { type: 'string', default: '1' },
  },
});
const TARGETS = args.targets.split(',').map((t) => t.trim()) as DatabaseKind[];
const PHASES = args.phases.split(',').map((p) => p.trim());
const CONNECTIONS = Number(args.connections);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const BACKLOG = Number(args.backlog);
/** Endpoints (each with every event type, each its own receiver path): deliveries per create. */
const ENDPOINTS = Number(args.endpoints);

const BODY = {
  amount: 1500.5,
  currency: 'KES',
  title: 'Used phone, 128 GB',
  customer: { name: 'Amina Otieno', phone: '+254712345678', email: 'amina@example.com' },
  seller_email: 'seller@example.com',
  metadata: { channel: 'bench' },
};

// ---------------------------------------------------------------- the receiver

/** The receiver (bench/webhook-receiver.ts) in its own process; counts and arrivals over IPC. */
async function startReceiver() {
  const { child } = spawnScript(join(ROOT, 'bench', 'webhook-receiver.ts'), [], process.env, { ipc: true });
  const ask = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const listen = (message: { type: string } & T) => {
        if (message.type !== type) return;
        child.off('message', listen);
        resolve(message);
      };
      child.on('message', listen);
      child.send({ type });
    });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { type: string; port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  let known = { count: 0, requests: 0 };
  return {
    url: `http://127.0.0.1:${port}`,
    /** Deliveries seen (first arrivals), refreshed by refresh(). */
    size: () => known.count,
    requests: () => known.requests,
    refresh: async () => {
      known = await ask<{ count: number; requests: number }>('count');
    },
    /** [arrival ms, occurred_at ms] of each delivery's first arrival. */
    arrivals: async () => (await ask<{ arrivals: [number, number][] }>('dump')).arrivals,
    close: () => stopProcess(child),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// ---------------------------------------------------------------- helpers

let sequence = 0;
const runId = Math.random().toString(36).slice(2, 8);

function load(url: string, headers: Record<string, string>, options: { seconds?: number; amount?: number }) {
  return autocannon({
    url,
    connections: CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? 1 }),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/v1/transactions',
        headers: { ...headers, 'content-type': 'application/json' },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ ...BODY, merchant_reference: `wh-${runId}-${++sequence}` }),
        }),
      },
    ],
  });
}

async function registerEndpoints(url: string, headers: Record<string, string>, receiver: Receiver) {
  for (let i = 0; i < ENDPOINTS; i++) {
    const res = await fetch(`${url}/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/hooks/${i}`, enabled_events: ['*'] }),
    });
    if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${await res.text()}`);
  }
}

/** Polls the receiver until `condition` holds; returns how long it took. */
async function waitUntil(
  receiver: Receiver,
  condition: () => boolean,
  what: string,
  ms: number,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    await receiver.refresh();
    if (condition()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Every event delivered once to each endpoint (as many as the receiver saw), recorded as succeeded;
 * nothing left on the fan-out queue. Returns the number of events.
 */
async function verify(db: Db, received: number): Promise<number> {
  const { rows } = await db.query<{ status: string; n: bigint }>(
    'SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status',
  );
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  const events = Number((await db.query<{ n: bigint }>('SELECT count(*) AS n FROM events')).rows[0]?.n ?? 0n);
  const queued = Number(
    (await db.query<{ n: bigint }>('SELECT count(*) AS n FROM events_to_fan_out')).rows[0]?.n ?? 0n,
  );
  const expected = events * ENDPOINTS;
  if (
    expected !== received ||
    byStatus.succeeded !== expected ||
    Object.keys(byStatus).length !== 1 ||
    queued
  ) {
    throw new Error(
      `expected every event delivered once: events ${events}, received ${received}, deliveries ${JSON.stringify(byStatus)}, queued ${queued}`,
    );
  }
  return events;
}

/** Waits until no new event has arrived for `quietMs` (requests still in flight at the end of a load). */
async function settle(receiver: Receiver, quietMs = 1500): Promise<void> {
  let size = -1;
  await receiver.refresh();
  while (size !== receiver.size()) {
    size = receiver.size();
    await new Promise((r) => setTimeout(r, quietMs));
    await receiver.refresh();
  }
}

// ---------------------------------------------------------------- steady state

interface SteadyOutcome {
  kind: DatabaseKind;
  createsPerSecond: number;
  deliveriesPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  drainMs: number;
  serverCpu: number | undefined;
  dbCpu: number | undefined;
  events: number;
  duplicates: number;
}

async function steady(kind: DatabaseKind): Promise<SteadyOutcome> {
  const receiver = await startReceiver();
  const server = await startSafehold(kind);
  try {
    await registerEndpoints(server.url, server.headers, receiver);
    const warm = await load(server.url, server.headers, { seconds: WARMUP });
    let created = warm['2xx'];
    const dbPids = (await server.dbPids?.()) ?? [];
    const cpuBefore = cpuSeconds(server.child.pid);
    const dbBefore = totalCpuSeconds(dbPids);
    const start = performance.timeOrigin + performance.now();
    const result = await load(server.url, server.headers, { seconds: DURATION });
    const end = performance.timeOrigin + performance.now();
    const cpuAfter = cpuSeconds(server.child.pid);
    const dbAfter = totalCpuSeconds(dbPids);
    created += result['2xx'];
    if (result.non2xx + result.errors + result.timeouts > 0) {
      throw new Error(
        `${kind}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    // Every create writes one event (transaction.created); all must arrive. (Creates still in flight
    // when a load ends are made but not counted by the client: they arrive too, and are checked.)
    const drainMs = await waitUntil(
      receiver,
      () => receiver.size() >= created * ENDPOINTS,
      'every event to arrive',
      300_000,
    );
    await settle(receiver);
    const window = await receiver.arrivals();
    const delivered = window.filter(([at]) => at >= start && at < end).length;
    const delays = window
      .filter(([, occurredAt]) => occurredAt >= start && occurredAt < end)
      .map(([at, occurredAt]) => at - occurredAt)
      .sort((a, b) => a - b);
    await stopProcess(server.child);
    const db = await server.openDb();
    try {
      created = await verify(db, receiver.size());
    } finally {
      await db.close();
    }
    return {
      kind,
      createsPerSecond: result['2xx'] / result.duration,
      deliveriesPerSecond: delivered / ((end - start) / 1000),
      p50: percentile(delays, 50),
      p99: percentile(delays, 99),
      max: delays.at(-1) ?? Number.NaN,
      drainMs,
      serverCpu: percentOf(cpuBefore, cpuAfter, result.duration),
      dbCpu: percentOf(dbBefore, dbAfter, result.duration),
      events: created,
      duplicates: receiver.requests() - receiver.size(),
    };
  } finally {
    await stopProcess(server.child);
    await receiver.close();
    await server.cleanup();
  }
}

// ---------------------------------------------------------------- backlog

interface BacklogOutcome {
  events: number;
  seconds: number;
  deliveriesPerSecond: number;
  workerCpu: number | undefined;
  dbCpu: number | undefined;
}

async function backlog(): Promise<BacklogOutcome> {
  const receiver = await startReceiver();
  const db = await createDatabase();
  const port = await freePort();
  const env = serverEnv(port, { DATABASE_URL: db.url });
  try {
    const key = await merchantKey(env);
    const headers = { authorization: `Bearer ${key}` };
    const api = await startProcess(CLI, ['serve', '--role', 'api'], env, port);
    await registerEndpoints(api.url, headers, receiver);
    const result = await load(api.url, headers, { amount: BACKLOG });
    if (result['2xx'] !== BACKLOG)
      throw new Error(`backlog: ${result['2xx']} of ${BACKLOG} creates answered 201`);
    await stopProcess(api.child);
    const events = BACKLOG;
    const start = Date.now();
    const worker = spawnScript(CLI, ['serve', '--role', 'worker'], env);
    const pids = () => backendPids(db.name);
    await waitUntil(receiver, () => receiver.size() > 0, 'the first delivery', 60_000);
    const dbPids = await pids();
    const cpuBefore = cpuSeconds(worker.child.pid);
    const dbBefore = totalCpuSeconds(dbPids);
    const cpuStart = Date.now();
    await waitUntil(
      receiver,
      () => receiver.size() >= events * ENDPOINTS,
      'the backlog to be delivered',
      600_000,
    );
    const seconds = (Date.now() - start) / 1000;
    const cpuSecondsWindow = (Date.now() - cpuStart) / 1000;
    const workerCpu = percentOf(cpuBefore, cpuSeconds(worker.child.pid), cpuSecondsWindow);
    const dbCpu = percentOf(dbBefore, totalCpuSeconds(dbPids), cpuSecondsWindow);
    await stopProcess(worker.child);
    const check = await openDatabase({ databaseUrl: db.url, dataDir: undefined, poolSize: 2 });
    try {
      await verify(check, receiver.size());
    } finally {
      await check.close();
    }
    return {
      events: BACKLOG,
      seconds,
      deliveriesPerSecond: (BACKLOG * ENDPOINTS) / seconds,
      workerCpu,
      dbCpu,
    };
  } finally {
    await receiver.close();
    await db.drop();
  }
}

// ---------------------------------------------------------------- main

await runBenchmark('bench:webhooks', async () => {
  process.stdout.write(
    `bench:webhooks: ${CONNECTIONS} connections, ${DURATION} s measured after ${WARMUP} s warm-up, ` +
      `${ENDPOINTS} endpoint(s) per event; ` +
      `load average before: ${loadAverage()}\n\n`,
  );
  const canPostgres = await postgresReachable();
  if (PHASES.includes('steady')) {
    const rows: string[][] = [];
    for (const kind of TARGETS) {
      if (kind === 'postgres' && !canPostgres) {
        rows.push([kind, 'PostgreSQL unreachable']);
        continue;
      }
      const o = await steady(kind);
      rows.push([
        kind,
        fixed(o.createsPerSecond),
        fixed(o.deliveriesPerSecond),
        fixed(o.p50),
        fixed(o.p99),
        fixed(o.max),
        fixed(o.drainMs),
        percent(o.serverCpu),
        percent(o.dbCpu),
        String(o.events),
        String(o.duplicates),
      ]);
    }
    process.stdout.write(
      'Steady: deliveries under the create load (delays in ms, commit to first attempt)\n' +
        table(
          [
            ['target', 10],
            ['creates/s', 11],
            ['deliveries/s', 14],
            ['p50', 7],
            ['p99', 7],
            ['max', 7],
            ['drain ms', 10],
            ['server CPU', 12],
            ['db CPU', 9],
            ['events', 9],
            ['repeats', 9],
          ],
          rows,
        ) +
        '\n\n',
    );
  }
  if (PHASES.includes('backlog') && canPostgres) {
    const o = await backlog();
    process.stdout.write(
      `Backlog: one worker process delivered ${o.events} events to ${ENDPOINTS} endpoint(s) in ${o.seconds.toFixed(1)} s: ` +
        `${o.deliveriesPerSecond.toFixed(0)} deliveries/s (worker CPU ${percent(o.workerCpu)}, ` +
        `PostgreSQL CPU ${percent(o.dbCpu)})\n`,
    );
  }
  process.stdout.write(`\nload average after: ${loadAverage()}\n`);
});
