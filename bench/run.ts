/**
 * Load benchmark of POST /v1/transactions (npm run bench). See bench/README.md for the method.
 *
 * In one go it measures three targets, each a real server in its own child process, with this
 * process as the load generator (autocannon), so the client never takes the server's event loop:
 *   bare      a Fastify route returning a constant (bench/bare-server.ts): the floor
 *   pglite    `safehold serve` on a PGlite folder in a temp directory
 *   postgres  `safehold serve` on a fresh PostgreSQL database, dropped at the end
 * Every create has a distinct merchant_reference, sent with the key of a merchant whose rate
 * limit is raised. After each target the database is counted: one transaction, one payment link
 * and one transaction.created event per 201, or the run fails.
 *
 * Options: --connections 32 --duration 10 --warmup 4 --rounds 3 --targets bare,pglite,postgres
 * PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres
 * (any database on the server: the benchmark creates its own beside it and drops it).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Queryable } from '../src/store/db.ts';
import { cpuSeconds, percentOf, totalCpuSeconds } from './lib/cpu.ts';
import { ADMIN_URL, postgresReachable } from './lib/postgres.ts';
import { freePort, ROOT, runBenchmark, startProcess, stopProcess } from './lib/processes.ts';
import { type RunningServer, startSafehold } from './lib/safehold.ts';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    targets: { type: 'string', default: 'bare,pglite,postgres' },
  },
});
const CONNECTIONS = Number(args.connections);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const ROUNDS = Number(args.rounds);
const TARGETS = args.targets.split(',').map((t) => t.trim());

interface Round {
  createsPerSecond: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  /** Server process CPU over the round, in percent of one core. */
  serverCpu: number | undefined;
  /** CPU of the PostgreSQL backends serving the server's pool, in percent of one core. */
  dbCpu: number | undefined;
  /** CPU of this process, the load generator, in percent of one core. */
  clientCpu: number;
}

interface Outcome {
  target: string;
  rounds: Round[];
  note?: string;
}

interface Running {
  url: string;
  child: ChildProcess;
  /** The tail of what the server printed. */
  output: () => string;
  headers: Record<string, string>;
  /** Process ids of the database backends serving this server (PostgreSQL on this machine). */
  dbPids?: () => Promise<number[]>;
  /** Checks the database after the server stopped: rows made must match 201s answered. */
  verify?: (expected: number) => Promise<void>;
  cleanup: () => Promise<void>;
}

// ---------------------------------------------------------------- targets

const BODY = {
  amount: 1500.5,
  currency: 'KES',
  title: 'Used phone, 128 GB',
  customer: { name: 'Amina Otieno', phone: '+254712345678', email: 'amina@example.com' },
  seller_email: 'seller@example.com',
  metadata: { channel: 'bench' },
};

async function startBare(): Promise<Running> {
  const port = await freePort();
  const { child, url, output } = await startProcess(
    join(ROOT, 'bench', 'bare-server.ts'),
    [],
    { ...process.env, PORT: String(port) },
    port,
  );
  return { url, child, output, headers: {}, cleanup: async () => {} };
}

async function countRows(q: Queryable) {
  const { rows } = await q.query(
    `SELECT (SELECT count(*) FROM transactions) AS transactions,
            (SELECT count(*) FROM payment_links) AS links,
            (SELECT count(*) FROM events WHERE type = 'transaction.created') AS events`,
  );
  const row = rows[0] ?? {};
  return { transactions: Number(row.transactions), links: Number(row.links), events: Number(row.events) };
}

/**
 * Every transaction has its link and its event, and there is one per 201 the client saw, plus at
 * most one per connection and load run for requests still in flight when a run's clock stopped.
 */
function checkCounts(counts: { transactions: number; links: number; events: number }, answered: number) {
  const inFlight = CONNECTIONS * (ROUNDS + 1);
  const { transactions, links, events } = counts;
  if (
    links !== transactions ||
    events !== transactions ||
    transactions < answered ||
    transactions > answered + inFlight
  ) {
    throw new Error(`database holds ${JSON.stringify(counts)} but the server answered ${answered} creates`);
  }
}

/** safehold serve on a fresh database; afterwards its rows must match the 201s the client saw. */
async function startServer(kind: 'pglite' | 'postgres'): Promise<Running> {
  const server: RunningServer = await startSafehold(kind);
  return {
    ...server,
    verify: async (expected) => {
      const db = await server.openDb();
      try {
        checkCounts(await countRows(db), expected);
      } finally {
        await db.close();
      }
    },
  };
}

// ---------------------------------------------------------------- load

let sequence = 0;
const runId = randomBytes(3).toString('hex');

function load(target: Running, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/v1/transactions',
        headers: { ...target.headers, 'content-type': 'application/json' },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ ...BODY, merchant_reference: `bench-${runId}-${++sequence}` }),
        }),
      },
    ],
  });
}

async function measure(name: string, start: () => Promise<Running>): Promise<Outcome> {
  const target = await start();
  const rounds: Round[] = [];
  let created = 0;
  try {
    const warm = await load(target, WARMUP);
    created += warm['2xx'];
    for (let i = 0; i < ROUNDS; i++) {
      const dbPids = (await target.dbPids?.()) ?? [];
      const cpuBefore = cpuSeconds(target.child.pid);
      const dbBefore = totalCpuSeconds(dbPids);
      const clientBefore = process.cpuUsage();
      const result = await load(target, DURATION);
      const client = process.cpuUsage(clientBefore);
      const cpuAfter = cpuSeconds(target.child.pid);
      const dbAfter = totalCpuSeconds(dbPids);
      created += result['2xx'];
      rounds.push({
        createsPerSecond: result['2xx'] / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        ok: result['2xx'],
        failed: result.non2xx + result.errors + result.timeouts,
        serverCpu: percentOf(cpuBefore, cpuAfter, result.duration),
        dbCpu: percentOf(dbBefore, dbAfter, result.duration),
        clientCpu: (client.user + client.system) / 10_000 / result.duration,
      });
      const last = rounds[rounds.length - 1];
      if (last && last.failed > 0) {
        const codes = JSON.stringify(result.statusCodeStats ?? {});
        const exited = target.child.exitCode ?? target.child.signalCode;
        throw new Error(
          `${name}: ${result.non2xx} non-2xx answers (status codes ${codes}), ${result.errors} connection ` +
            `errors, ${result.timeouts} timeouts${exited === null ? '' : `; the server exited (${exited})`}\n` +
            `server output:\n${target.output()}`,
        );
      }
      process.stderr.write(
        `  ${name} round ${i + 1}: ${last?.createsPerSecond.toFixed(0)}/s, p50 ${last?.p50} ms, p99 ${last?.p99} ms\n`,
      );
    }
  } finally {
    await stopProcess(target.child);
  }
  try {
    await target.verify?.(created);
  } finally {
    await target.cleanup();
  }
  return { target: name, rounds };
}

// ---------------------------------------------------------------- report

function best(rounds: Round[]): Round | undefined {
  return [...rounds].sort((a, b) => b.createsPerSecond - a.createsPerSecond)[0];
}

const COLUMNS: Array<[string, number]> = [
  ['target', 9],
  ['creates/s', 11],
  ['spread', 13],
  ['p50 ms', 8],
  ['p99 ms', 8],
  ['worst p99', 11],
  ['vs bare', 9],
  ['server CPU', 12],
  ['db CPU', 8],
  ['client CPU', 12],
  ['CPU ms/req', 12],
];

function row(cells: string[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(COLUMNS[i]?.[1] ?? 0) : cell.padStart(COLUMNS[i]?.[1] ?? 0)))
    .join('');
}

function report(outcomes: Outcome[]): string {
  const bare = best(outcomes.find((o) => o.target === 'bare')?.rounds ?? []);
  const percent = (value: number | undefined) => (value === undefined ? '-' : `${value.toFixed(0)}%`);
  const lines = [
    `POST /v1/transactions, ${CONNECTIONS} connections, ${DURATION} s per round after ${WARMUP} s warm-up, ` +
      `${ROUNDS} round(s): the best round by creates/s, with the spread of creates/s and the worst p99 ` +
      'over all rounds',
    '',
    row(COLUMNS.map(([title]) => title)),
  ];
  for (const o of outcomes) {
    const b = best(o.rounds);
    if (!b) {
      lines.push(`${o.target.padEnd(9)}skipped: ${o.note ?? 'no result'}`);
      continue;
    }
    const rates = o.rounds.map((r) => r.createsPerSecond);
    lines.push(
      row([
        o.target,
        b.createsPerSecond.toFixed(0),
        `${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}`,
        String(b.p50),
        String(b.p99),
        String(Math.max(...o.rounds.map((r) => r.p99))),
        bare ? `${((100 * b.createsPerSecond) / bare.createsPerSecond).toFixed(0)}%` : '-',
        percent(b.serverCpu),
        percent(b.dbCpu),
        percent(b.clientCpu),
        b.serverCpu === undefined
          ? '-'
          : ((10 * (b.serverCpu + (b.dbCpu ?? 0))) / b.createsPerSecond).toFixed(2),
      ]),
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const starters: Record<string, () => Promise<Running>> = {
    bare: startBare,
    pglite: () => startServer('pglite'),
    postgres: () => startServer('postgres'),
  };
  const outcomes: Outcome[] = [];
  for (const name of TARGETS) {
    const start = starters[name];
    if (!start) throw new Error(`unknown target '${name}' (bare, pglite, postgres)`);
    if (name === 'postgres' && !(await postgresReachable())) {
      outcomes.push({ target: name, rounds: [], note: `PostgreSQL not reachable at ${ADMIN_URL}` });
      continue;
    }
    process.stderr.write(`${name}: starting\n`);
    outcomes.push(await measure(name, start));
  }
  process.stdout.write(`${report(outcomes)}\n`);
}

await runBenchmark('bench', main);
