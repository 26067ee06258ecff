/**
 * Load benchmark of the full flow (npm run bench:lifecycle). See bench/README.md for the method.
 *
 * Each of --connections clients runs the flow over and over on its own keep-alive connection:
 *   POST /v1/transactions                          create        (201, pending_payment)
 *   POST /v1/test_helpers/transactions/{id}/pay    pay by card 4242 4242 4242 4242, settled at once (reserved)
 *   POST /v1/transactions/{id}/deliver             deliver       (delivered, review window starts)
 *   POST /v1/transactions/{id}/confirm             confirm       (confirmed / approved_for_release)
 * against a real `safehold serve` in its own process (PostgreSQL: a fresh database, dropped at
 * the end; PGlite: a fresh folder), with this process as the load generator (autocannon). Every
 * answer must be the expected 2xx with the expected status, or the run fails. Afterwards the
 * database is checked: one confirmed transaction per confirm answered (plus those in flight when
 * a round stopped), the books sound (verifyLedger), one status change to confirmed each.
 *
 * Options: --connections 32 --duration 10 --warmup 4 --rounds 3 --targets postgres,pglite
 *          --pgbench (first measure the machine with pgbench, to put the figures in context)
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { verifyLedger } from '../src/operations/verify-ledger.ts';
import { cpuSeconds, loadAverage, percentOf, totalCpuSeconds } from './lib/cpu.ts';
import { ADMIN_URL, pgbenchTps, postgresReachable } from './lib/postgres.ts';
import { runBenchmark, stopProcess } from './lib/processes.ts';
import { type DatabaseKind, type RunningServer, startSafehold } from './lib/safehold.ts';
import { fixed, percent, percentile, spread, table } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    targets: { type: 'string', default: 'postgres,pglite' },
    pgbench: { type: 'boolean', default: false },
  },
});
const CONNECTIONS = Number(args.connections);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const ROUNDS = Number(args.rounds);
const TARGETS = args.targets.split(',').map((t) => t.trim());

const STEPS = ['create', 'pay', 'deliver', 'confirm'] as const;
type Step = (typeof STEPS)[number];
/** The status each step's answer must show. */
const EXPECTED: Record<Step, { code: number; status: string }> = {
  create: { code: 201, status: 'pending_payment' },
  pay: { code: 200, status: 'reserved' },
  deliver: { code: 200, status: 'delivered' },
  confirm: { code: 200, status: 'confirmed' },
};

const BODY = {
  amount: 1500.5,
  currency: 'KES',
  title: 'Used phone, 128 GB',
  customer: { name: 'Amina Otieno', phone: '+254712345678', email: 'amina@example.com' },
  seller_email: 'seller@example.com',
  metadata: { channel: 'bench' },
};
const PAY_BODY = JSON.stringify({ method: 'card', card_number: '4242424242424242' });

interface Round {
  seconds: number;
  flowsPerSecond: number;
  requestsPerSecond: number;
  /** Per step: milliseconds at p50 and p99, from the moment the request was built to its answer. */
  steps: Record<Step, { p50: number; p99: number; ok: number }>;
  serverCpu: number | undefined;
  dbCpu: number | undefined;
  clientCpu: number;
}

interface Outcome {
  target: string;
  rounds: Round[];
  checked?: string;
  note?: string;
}

interface Flow {
  id?: string;
  started?: number;
}

/** What one load run saw, per step. */
class Recorder {
  readonly latencies: Record<Step, number[]> = { create: [], pay: [], deliver: [], confirm: [] };
  readonly failures: string[] = [];
  failed = 0;

  record(step: Step, status: number, body: string, started: number | undefined): string | undefined {
    const expected = EXPECTED[step];
    let parsed: { service_transaction_id?: string; status?: string } = {};
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      // counted below as a failure
    }
    if (status !== expected.code || parsed.status !== expected.status) {
      this.failed += 1;
      if (this.failures.length < 5) this.failures.push(`${step}: ${status} ${body.slice(0, 300)}`);
      return undefined;
    }
    if (started !== undefined) this.latencies[step].push(performance.now() - started);
    return parsed.service_transaction_id;
  }
}

let sequence = 0;
const runId = randomBytes(3).toString('hex');

function load(target: RunningServer, seconds: number, recorder: Recorder): Promise<autocannon.Result> {
  const headers = { ...target.headers, 'content-type': 'application/json' };
  const step = (name: Exclude<Step, 'create'>, path: (id: string) => string, body: string) => ({
    method: 'POST' as const,
    headers,
    setupRequest: (request: autocannon.Request, context: Flow) => {
      // No id: the create failed (already counted); start the flow again.
      if (!context.id) return undefined as unknown as autocannon.Request;
      context.started = performance.now();
      return { ...request, path: path(context.id), body };
    },
    onResponse: (status: number, body: string, context: Flow) => {
      recorder.record(name, status, body, context.started);
    },
  });
  return autocannon({
    url: target.url,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/v1/transactions',
        headers,
        setupRequest: (request, context: Flow) => {
          context.started = performance.now();
          return {
            ...request,
            body: JSON.stringify({ ...BODY, merchant_reference: `flow-${runId}-${++sequence}` }),
          };
        },
        onResponse: (status, body, context: Flow) => {
          context.id = recorder.record('create', status, body, context.started);
        },
      },
      step('pay', (id) => `/v1/test_helpers/transactions/${id}/pay`, PAY_BODY),
      step('deliver', (id) => `/v1/transactions/${id}/deliver`, '{}'),
      step('confirm', (id) => `/v1/transactions/${id}/confirm`, '{}'),
    ],
  });
}

function failIfAny(name: string, target: RunningServer, result: autocannon.Result, recorder: Recorder) {
  const failed = recorder.failed + result.errors + result.timeouts;
  if (failed === 0) return;
  const exited = target.child.exitCode ?? target.child.signalCode;
  throw new Error(
    `${name}: ${recorder.failed} unexpected answers, ${result.errors} connection errors, ${result.timeouts} ` +
      `timeouts${exited === null ? '' : `; the server exited (${exited})`}\n` +
      `first unexpected answers:\n${recorder.failures.join('\n')}\nserver output:\n${target.output()}`,
  );
}

/**
 * The database after the load: every flow a client saw confirmed is confirmed, flows cut off when
 * a round's clock stopped are at most one per connection and run, no other status exists, each
 * confirmed transaction changed to confirmed exactly once and holds nothing, and the books are
 * sound.
 */
async function verify(target: RunningServer, confirmed: number, created: number): Promise<string> {
  const db = await target.openDb();
  try {
    const problems = await verifyLedger(db);
    if (problems.length > 0) {
      throw new Error(`verifyLedger found ${problems.length} problems, e.g. ${JSON.stringify(problems[0])}`);
    }
    const { rows } = await db.query<{ status: string; n: bigint }>(
      'SELECT status, count(*)::bigint AS n FROM transactions GROUP BY status',
    );
    const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
    const inFlight = CONNECTIONS * (ROUNDS + 1);
    const unexpected = Object.keys(by).filter(
      (s) => !['pending_payment', 'reserved', 'delivered', 'confirmed'].includes(s),
    );
    const done = by.confirmed ?? 0;
    if (unexpected.length > 0 || done < confirmed || done > confirmed + inFlight) {
      throw new Error(`database holds ${JSON.stringify(by)}; the clients saw ${confirmed} confirms answered`);
    }
    if (total < created || total > created + inFlight) {
      throw new Error(`database holds ${total} transactions; the clients saw ${created} creates answered`);
    }
    const { rows: changes } = await db.query<{ bad: bigint }>(
      `SELECT count(*)::bigint AS bad FROM transactions t
        WHERE t.status = 'confirmed' AND (t.settlement_status <> 'approved_for_release'
           OR (SELECT count(*) FROM events e WHERE e.service_transaction_id = t.id
                 AND e.type = 'transaction.status_changed' AND e.payload->>'status' = 'confirmed') <> 1)`,
    );
    if (Number(changes[0]?.bad) !== 0) {
      throw new Error(
        `${changes[0]?.bad} confirmed transactions without exactly one status change to confirmed`,
      );
    }
    return `${done} confirmed, ${total - done} cut off mid-flow, ledger sound`;
  } finally {
    await db.close();
  }
}

async function measure(kind: DatabaseKind): Promise<Outcome> {
  const target = await startSafehold(kind);
  const rounds: Round[] = [];
  let confirmed = 0;
  let created = 0;
  try {
    const warm = new Recorder();
    const warmResult = await load(target, WARMUP, warm);
    failIfAny(kind, target, warmResult, warm);
    confirmed += warm.latencies.confirm.length;
    created += warm.latencies.create.length;
    for (let i = 0; i < ROUNDS; i++) {
      const recorder = new Recorder();
      const dbPids = (await target.dbPids?.()) ?? [];
      const cpuBefore = cpuSeconds(target.child.pid);
      const dbBefore = totalCpuSeconds(dbPids);
      const clientBefore = process.cpuUsage();
      const result = await load(target, DURATION, recorder);
      const client = process.cpuUsage(clientBefore);
      const cpuAfter = cpuSeconds(target.child.pid);
      const dbAfter = totalCpuSeconds(dbPids);
      failIfAny(kind, target, result, recorder);
      confirmed += recorder.latencies.confirm.length;
      created += recorder.latencies.create.length;
      const seconds = result.duration;
      const steps = Object.fromEntries(
        STEPS.map((s) => {
          const sorted = recorder.latencies[s].sort((a, b) => a - b);
          return [s, { p50: percentile(sorted, 50), p99: percentile(sorted, 99), ok: sorted.length }];
        }),
      ) as Round['steps'];
      const ok = STEPS.reduce((sum, s) => sum + steps[s].ok, 0);
      const round: Round = {
        seconds,
        flowsPerSecond: steps.confirm.ok / seconds,
        requestsPerSecond: ok / seconds,
        steps,
        serverCpu: percentOf(cpuBefore, cpuAfter, seconds),
        dbCpu: percentOf(dbBefore, dbAfter, seconds),
        clientCpu: (client.user + client.system) / 10_000 / seconds,
      };
      rounds.push(round);
      process.stderr.write(
        `  ${kind} round ${i + 1}: ${round.flowsPerSecond.toFixed(0)} flows/s, ` +
          `${round.requestsPerSecond.toFixed(0)} requests/s, p99 ms ${STEPS.map((s) => `${s} ${steps[s].p99.toFixed(1)}`).join(', ')}\n`,
      );
    }
  } finally {
    await stopProcess(target.child);
  }
  try {
    return { target: kind, rounds, checked: await verify(target, confirmed, created) };
  } finally {
    await target.cleanup();
  }
}

function report(outcomes: Outcome[]): string {
  const lines = [
    `Full flow (create, pay, deliver, confirm), ${CONNECTIONS} connections, ${DURATION} s per round after ` +
      `${WARMUP} s warm-up, ${ROUNDS} round(s); the best round by flows/s, with the spread over all rounds`,
    '',
  ];
  const rows: string[][] = [];
  for (const o of outcomes) {
    const best = [...o.rounds].sort((a, b) => b.flowsPerSecond - a.flowsPerSecond)[0];
    if (!best) {
      rows.push([o.target, `skipped: ${o.note ?? 'no result'}`]);
      continue;
    }
    const cpuMs =
      best.serverCpu === undefined
        ? undefined
        : (10 * (best.serverCpu + (best.dbCpu ?? 0))) / best.requestsPerSecond;
    rows.push([
      o.target,
      fixed(best.flowsPerSecond),
      spread(o.rounds.map((r) => r.flowsPerSecond)),
      fixed(best.requestsPerSecond),
      ...STEPS.map((s) => `${fixed(best.steps[s].p50, 1)} / ${fixed(best.steps[s].p99, 1)}`),
      percent(best.serverCpu),
      percent(best.dbCpu),
      percent(best.clientCpu),
      fixed(cpuMs, 2),
    ]);
  }
  lines.push(
    table(
      [
        ['target', 9],
        ['flows/s', 9],
        ['spread', 11],
        ['requests/s', 12],
        ...STEPS.map((s): [string, number] => [`${s} p50/p99 ms`, s.length + 16]),
        ['server CPU', 12],
        ['db CPU', 8],
        ['client CPU', 12],
        ['CPU ms/req', 12],
      ],
      rows,
    ),
  );
  for (const o of outcomes) if (o.checked) lines.push(`${o.target}: ${o.checked}`);
  lines.push(`load average after the run: ${loadAverage()}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const outcomes: Outcome[] = [];
  process.stderr.write(`load average before the run: ${loadAverage()}\n`);
  const tps = args.pgbench ? await pgbenchTps() : undefined;
  if (tps !== undefined) {
    process.stderr.write(`pgbench TPC-B (scale 10, 32 clients, 10 s) just before: ${tps.toFixed(0)} tps\n`);
  }
  for (const name of TARGETS) {
    if (name !== 'postgres' && name !== 'pglite')
      throw new Error(`unknown target '${name}' (postgres, pglite)`);
    if (name === 'postgres' && !(await postgresReachable())) {
      outcomes.push({ target: name, rounds: [], note: `PostgreSQL not reachable at ${ADMIN_URL}` });
      continue;
    }
    process.stderr.write(`${name}: starting\n`);
    outcomes.push(await measure(name));
  }
  process.stdout.write(`${report(outcomes)}\n`);
}

await runBenchmark('bench:lifecycle', main);
