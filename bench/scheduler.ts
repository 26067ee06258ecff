/**
 * Scheduler benchmark (npm run bench:scheduler): how fast the worker auto-releases transactions
 * whose review windows have ended, on PostgreSQL. See bench/README.md for the method.
 *
 * 1. Setup, once: a fresh database, migrated by the service itself. A few template transactions
 *    go through the real API in this process (create, pay by test card, deliver) on a clock set
 *    days back, so their review windows have ended; then each is cloned in bulk SQL (its
 *    transaction, payment link, payment attempt, capture journal row, events and auto_release
 *    job, with fresh ids, references and token hashes) up to --transactions in all. The database
 *    is vacuumed and analysed and kept as a template.
 * 2. Each run: a copy of the template (CREATE DATABASE … TEMPLATE), a CHECKPOINT, then --workers
 *    worker processes (bench/lib/scheduler-worker.ts) each call runDueJobs(ctx, {}, batch) at the
 *    same moment; the clock runs from 'go' until the last one has found nothing left.
 * 3. Each run is checked: verifyLedger finds nothing wrong, every transaction is confirmed /
 *    approved_for_release with exactly one status change from delivered to confirmed and one
 *    approve journal row, and no job is left but the payout run the approvals scheduled.
 * 4. Last, the cost of a worker's poll when nothing is due (all the jobs 60 days ahead).
 *
 * Options: --transactions 100000 --workers 1,2 --batch 200,500,1000 --repeat 1 --templates 12
 *          --keep-template (keep the set-up database and print its name), --template NAME (reuse it;
 *          --transactions must match; drop it with DROP DATABASE when done), --pgbench (first measure
 *          the machine with pgbench, to put the figures in context)
 * PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openContext } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { ManualClock } from '../src/domain/clock.ts';
import { newId } from '../src/domain/ids.ts';
import { createMerchant } from '../src/operations/manage-merchants.ts';
import { verifyLedger } from '../src/operations/verify-ledger.ts';
import type { Db, Queryable } from '../src/store/db.ts';
import { openDatabase } from '../src/store/open.ts';
import { runDueJobs } from '../src/worker/run-due-jobs.ts';
import { cloneIdentity, cloneInto, cloneTransactionsWithLinks } from './lib/clone.ts';
import { loadAverage, totalCpuSeconds } from './lib/cpu.ts';
import { withInProcessApi } from './lib/in-process-api.ts';
import {
  ADMIN_URL,
  backendPids,
  createDatabase,
  pgbenchTps,
  postgresReachable,
  withAdmin,
} from './lib/postgres.ts';
import { ROOT, runBenchmark, spawnScript, stopProcess } from './lib/processes.ts';
import type { WorkerReport } from './lib/scheduler-worker.ts';
import { fixed, spread, table } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    transactions: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '1,2' },
    batch: { type: 'string', default: '200,500,1000' },
    repeat: { type: 'string', default: '1' },
    templates: { type: 'string', default: '12' },
    'keep-template': { type: 'boolean', default: false },
    template: { type: 'string' },
    pgbench: { type: 'boolean', default: false },
  },
});
const TOTAL = Number(args.transactions);
const WORKERS = args.workers.split(',').map(Number);
const BATCHES = args.batch.split(',').map(Number);
const REPEAT = Number(args.repeat);
const TEMPLATES = Number(args.templates);
/** Keep the set-up database (and print its name) for later runs with --template NAME. */
const KEEP_TEMPLATE = args['keep-template'];
const REUSE_TEMPLATE = args.template;
const DAY_MS = 86_400_000;

const log = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------- setup

/** Template transactions made through the API: paid by card and delivered, windows long ended. */
async function makeTemplates(url: string): Promise<string> {
  // Every review window (up to 14 days here) ended at least a day ago.
  const clock = new ManualClock(new Date(Date.now() - 15 * DAY_MS));
  const ctx = await openContext({ ...loadConfig({}), databaseUrl: url }, { clock, dataDir: undefined });
  try {
    const merchant = await createMerchant(ctx, { name: 'Scheduler Bench', email: 'bench@example.com' });
    await withInProcessApi(ctx, merchant.test_key, async (post) => {
      const windows = [3, 7, 14];
      for (let i = 0; i < TEMPLATES; i++) {
        const { service_transaction_id: id } = await post('/v1/transactions', {
          amount: 500 + 137.25 * i,
          currency: 'KES',
          title: `Template ${i}: used phone, 128 GB`,
          merchant_reference: `sched-template-${i}`,
          ...(i % 2 === 0
            ? { customer: { name: 'Amina Otieno', phone: '+254712345678', email: 'amina@example.com' } }
            : { customer: { phone: '+254712345678' } }),
          seller_email: 'seller@example.com',
          release_condition: { type: 'buyer_confirmation', review_window_days: windows[i % windows.length] },
          metadata: { channel: 'bench', template: String(i) },
        });
        await post(`/v1/test_helpers/transactions/${id}/pay`, {
          method: 'card',
          card_number: '4242424242424242',
        });
        const delivered = await post(`/v1/transactions/${id}/deliver`, {});
        if (delivered.status !== 'delivered') throw new Error(`template ${id} is ${delivered.status}`);
        clock.advance(1);
      }
    });
    // The buyer-link e-mails are due at payment (no mailer here: they only go); what is left is
    // one auto_release job per template.
    await runDueJobs(ctx, { kinds: ['send_buyer_link'] });
    return ctx.linkSecret;
  } finally {
    await ctx.db.close();
  }
}

interface Template {
  id: string;
  link: string;
  attempt: string;
  ref: string;
  createdMs: number;
  ledger: string[];
  job: string;
  events: Array<{ id: string; ms: number }>;
}

async function readTemplates(db: Queryable): Promise<Template[]> {
  const { rows } = await db.query<{
    id: string;
    payment_link_id: string;
    merchant_reference: string;
    created_at: Date;
    attempt: string;
    ledger: string[];
    jobs: string[];
    events: string[];
    event_times: Date[];
  }>(
    `SELECT t.id, t.payment_link_id, t.merchant_reference, t.created_at,
            (SELECT a.id FROM payment_attempts a WHERE a.transaction_id = t.id) AS attempt,
            ARRAY(SELECT l.id FROM ledger_entries l WHERE l.transaction_id = t.id ORDER BY l.id) AS ledger,
            ARRAY(SELECT j.id FROM scheduled_jobs j WHERE j.subject_id = t.id) AS jobs,
            ARRAY(SELECT e.id FROM events e WHERE e.service_transaction_id = t.id ORDER BY e.id) AS events,
            ARRAY(SELECT e.created_at FROM events e WHERE e.service_transaction_id = t.id ORDER BY e.id)
              AS event_times
       FROM transactions t ORDER BY t.id`,
  );
  return rows.map((r) => {
    const [job, ...more] = r.jobs;
    if (!job || more.length > 0 || r.ledger.length !== 1) {
      throw new Error(
        `template ${r.id}: ${r.jobs.length} jobs, ${r.ledger.length} journal rows; expected one each`,
      );
    }
    return {
      id: r.id,
      link: r.payment_link_id,
      attempt: r.attempt,
      ref: r.merchant_reference,
      createdMs: r.created_at.getTime(),
      ledger: r.ledger,
      job,
      events: r.events.map((id, i) => ({ id, ms: r.event_times[i]?.getTime() ?? 0 })),
    };
  });
}

const CLONE_MAP = `unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
  AS c(n, old_txn, new_txn, old_link, new_link, old_ref, new_ref, link_hash, buyer_hash, old_attempt,
       new_attempt, new_ledger, new_job, old_job)`;

/**
 * Clones the templates up to TOTAL transactions, in chunks: every row a paid and delivered
 * transaction has, with its own ids (made like the service makes them, at the template's times),
 * merchant_reference and link token hashes (derived from the service secret, so the links work).
 */
async function cloneTemplates(db: Db, secret: string): Promise<void> {
  const templates = await readTemplates(db);
  const clones = TOTAL - templates.length;
  const CHUNK = 5000;
  for (let start = 0; start < clones; start += CHUNK) {
    const map: Array<Array<string | number>> = Array.from({ length: 14 }, () => []);
    const events: Array<Array<string | number>> = [[], [], []];
    for (let k = start; k < Math.min(clones, start + CHUNK); k++) {
      const t = templates[k % templates.length];
      if (!t) throw new Error('no templates');
      const clone = cloneIdentity(secret, t.createdMs);
      const row = [
        k,
        t.id,
        clone.txn,
        t.link,
        clone.link,
        t.ref,
        `${t.ref}-${k}`,
        clone.linkHash,
        clone.buyerHash,
        t.attempt,
        newId('paymentAttempt', t.createdMs),
        newId('ledgerEntry', t.createdMs),
        newId('job', t.createdMs),
        t.job,
      ];
      row.forEach((value, i) => {
        map[i]?.push(value);
      });
      for (const e of t.events) {
        events[0]?.push(k);
        events[1]?.push(e.id);
        events[2]?.push(newId('event', e.ms));
      }
    }
    await db.transaction(async (tx) => {
      await cloneTransactionsWithLinks(tx, CLONE_MAP, map, {
        last_payment_attempt_id: 'c.new_attempt',
        last_payment_attempt: `jsonb_set(s.last_payment_attempt, '{id}', to_jsonb(c.new_attempt))`,
      });
      await cloneInto(
        tx,
        'payment_attempts',
        `${CLONE_MAP} JOIN payment_attempts s ON s.id = c.old_attempt`,
        { id: 'c.new_attempt', transaction_id: 'c.new_txn' },
        map,
      );
      await cloneInto(
        tx,
        'ledger_entries',
        `${CLONE_MAP} JOIN ledger_entries s ON s.transaction_id = c.old_txn`,
        { id: 'c.new_ledger', transaction_id: 'c.new_txn' },
        map,
      );
      await cloneInto(
        tx,
        'scheduled_jobs',
        `${CLONE_MAP} JOIN scheduled_jobs s ON s.id = c.old_job`,
        { id: 'c.new_job', subject_id: 'c.new_txn' },
        map,
      );
      // Events: the ids inside each payload follow the clone's.
      const payload = [
        ['c.old_txn', 'c.new_txn'],
        ['c.old_link', 'c.new_link'],
        ['c.old_attempt', 'c.new_attempt'],
        ['e.old_event', 'e.new_event'],
        [`'"' || c.old_ref || '"'`, `'"' || c.new_ref || '"'`],
      ].reduce((sql, [from, to]) => `replace(${sql}, ${from}, ${to})`, 's.payload::text');
      await cloneInto(
        tx,
        'events',
        `unnest($15::int[], $16::text[], $17::text[]) AS e(n, old_event, new_event)
           JOIN ${CLONE_MAP} ON c.n = e.n JOIN events s ON s.id = e.old_event`,
        { id: 'e.new_event', service_transaction_id: 'c.new_txn', payload: `${payload}::jsonb` },
        [...map, ...events],
      );
    });
    if ((start / CHUNK) % 5 === 4) log(`  cloned ${start + CHUNK + templates.length} transactions`);
  }
}

async function setupTemplate(): Promise<string> {
  const started = performance.now();
  const template = await createDatabase({ prefix: 'safehold_bench_sched', keep: KEEP_TEMPLATE });
  const secret = await makeTemplates(template.url);
  const db = await openDatabase({ databaseUrl: template.url, dataDir: undefined, poolSize: 2 });
  try {
    await cloneTemplates(db, secret);
    await db.exec('VACUUM ANALYZE');
    const { rows: counts } = await db.query<{ txns: bigint; jobs: bigint; events: bigint }>(
      `SELECT (SELECT count(*) FROM transactions WHERE status = 'delivered')::bigint AS txns,
              (SELECT count(*) FROM scheduled_jobs WHERE kind = 'auto_release' AND run_at < now())::bigint AS jobs,
              (SELECT count(*) FROM events)::bigint AS events`,
    );
    const c = counts[0];
    if (Number(c?.txns) !== TOTAL || Number(c?.jobs) !== TOTAL) {
      throw new Error(
        `template holds ${c?.txns} delivered transactions and ${c?.jobs} due jobs, not ${TOTAL}`,
      );
    }
    const problems = await verifyLedger(db);
    if (problems.length > 0)
      throw new Error(`template books unsound: ${JSON.stringify(problems.slice(0, 3))}`);
    log(
      `setup: ${TOTAL} delivered transactions (${TEMPLATES} made through the API, the rest cloned), ` +
        `${c?.events} events, books sound, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  } finally {
    await db.close();
  }
  return template.name;
}

// ---------------------------------------------------------------- runs

interface Run {
  workers: number;
  batch: number;
  ran: number;
  seconds: number;
  releasesPerSecond: number;
  /** Worker processes' CPU, and the PostgreSQL backends', in milliseconds per release. */
  workerCpuMs: number;
  dbCpuMs: number | undefined;
  checked: string;
}

/**
 * After a run: the books are sound, every transaction is confirmed / approved_for_release with
 * exactly one status change from delivered to confirmed and one approve journal row, no job is left
 * but the one payout run the approvals scheduled for the merchant (at the next midnight UTC).
 */
async function verifyRun(url: string): Promise<string> {
  const db = await openDatabase({ databaseUrl: url, dataDir: undefined, poolSize: 2 });
  try {
    const problems = await verifyLedger(db);
    if (problems.length > 0) {
      throw new Error(`verifyLedger found ${problems.length} problems, e.g. ${JSON.stringify(problems[0])}`);
    }
    const { rows } = await db.query<Record<string, bigint>>(
      `SELECT
         (SELECT count(*) FROM transactions)::bigint AS transactions,
         (SELECT count(*) FROM transactions
           WHERE status = 'confirmed' AND settlement_status = 'approved_for_release'
             AND amount_released_minor = amount_minor)::bigint AS released,
         (SELECT count(*) FROM transactions t LEFT JOIN (
             SELECT service_transaction_id AS id, count(*) AS n FROM events
              WHERE type = 'transaction.status_changed' AND payload->>'status' = 'confirmed'
                AND payload->>'previous_status' = 'delivered'
                AND payload->>'settlement_status' = 'approved_for_release'
              GROUP BY 1) e ON e.id = t.id
           WHERE e.n = 1)::bigint AS one_change,
         (SELECT count(*) FROM events WHERE type = 'transaction.status_changed'
             AND payload->>'status' = 'confirmed')::bigint AS changes,
         (SELECT count(*) FROM transactions t LEFT JOIN (
             SELECT transaction_id AS id, count(*) AS n, sum(amount_minor) AS amount FROM ledger_entries
              WHERE kind = 'approve' GROUP BY 1) l ON l.id = t.id
           WHERE l.n = 1 AND l.amount = t.amount_minor)::bigint AS one_approve,
         (SELECT count(*) FROM scheduled_jobs WHERE kind <> 'payout_run')::bigint AS jobs_left,
         (SELECT count(*) FROM scheduled_jobs WHERE kind = 'payout_run' AND run_at > now())::bigint AS payout_runs`,
    );
    const r = rows[0] ?? {};
    const n = (k: string) => Number(r[k]);
    if (
      n('transactions') !== TOTAL ||
      n('released') !== TOTAL ||
      n('one_change') !== TOTAL ||
      n('changes') !== TOTAL ||
      n('one_approve') !== TOTAL ||
      n('jobs_left') !== 0 ||
      n('payout_runs') !== 1
    ) {
      throw new Error(
        `after the run: ${JSON.stringify(Object.fromEntries(Object.keys(r).map((k) => [k, n(k)])))}`,
      );
    }
    return `${TOTAL} confirmed/approved_for_release, one status change and one approve row each, no job left but the merchant's next (midnight) payout run, books sound`;
  } finally {
    await db.close();
  }
}

async function startWorker(url: string, batch: number) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' };
  delete env.DATABASE_SCHEMA;
  delete env.SAFEHOLD_SECRET; // the secret kept in the database, as the template was made with
  env.BENCH_BATCH_SIZE = String(batch);
  const spawned = spawnScript(join(ROOT, 'bench', 'lib', 'scheduler-worker.ts'), [], env, { ipc: true });
  const messages: unknown[] = [];
  const waiters: Array<() => void> = [];
  spawned.child.on('message', (m) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const next = async (): Promise<unknown> => {
    for (;;) {
      const m = messages.shift();
      if (m !== undefined) return m;
      if (spawned.child.exitCode !== null) {
        throw new Error(`worker exited ${spawned.child.exitCode}: ${spawned.output()}`);
      }
      await new Promise<void>((ok) => {
        waiters.push(ok);
        spawned.child.once('exit', () => ok());
      });
    }
  };
  return { ...spawned, next };
}

async function run(template: string, workers: number, batch: number): Promise<Run> {
  const db = await createDatabase({ template });
  try {
    await withAdmin((admin) => admin.query('CHECKPOINT'));
    const procs = await Promise.all(Array.from({ length: workers }, () => startWorker(db.url, batch)));
    for (const p of procs) {
      const m = await p.next();
      if (m !== 'ready') throw new Error(`worker said ${JSON.stringify(m)}: ${p.output()}`);
    }
    const dbPids = await backendPids(db.name);
    const dbBefore = totalCpuSeconds(dbPids);
    const started = performance.now();
    for (const p of procs) p.child.send('go');
    const reports = await Promise.all(
      procs.map(async (p) => {
        const m = (await p.next()) as { report?: WorkerReport; error?: string };
        if (!m.report) throw new Error(`worker failed: ${m.error ?? JSON.stringify(m)}`);
        return m.report;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const dbAfter = totalCpuSeconds(dbPids);
    await Promise.all(
      procs.map(async (p) => {
        const exited = new Promise((ok) => p.child.once('exit', ok));
        p.child.send('stop');
        await Promise.race([exited, new Promise((ok) => setTimeout(ok, 10_000))]);
        await stopProcess(p.child);
      }),
    );
    const ran = reports.reduce((sum, r) => sum + r.ran, 0);
    if (ran !== TOTAL) throw new Error(`the workers ran ${ran} jobs, not ${TOTAL}`);
    const checked = await verifyRun(db.url);
    return {
      workers,
      batch,
      ran,
      seconds,
      releasesPerSecond: ran / seconds,
      workerCpuMs: reports.reduce((sum, r) => sum + r.cpuMs, 0) / ran,
      dbCpuMs:
        dbBefore === undefined || dbAfter === undefined ? undefined : ((dbAfter - dbBefore) * 1000) / ran,
      checked,
    };
  } finally {
    await db.drop();
  }
}

/**
 * What a worker's poll costs when nothing is due: the template's jobs all moved 60 days ahead,
 * then runDueJobs (the worker's round) timed over many polls.
 */
async function idlePoll(template: string): Promise<{ polls: number; msPerPoll: number }> {
  const db = await createDatabase({ template });
  try {
    await withAdmin(async (admin) => {
      await admin.query("UPDATE scheduled_jobs SET run_at = run_at + interval '60 days'");
      await admin.query('VACUUM ANALYZE scheduled_jobs');
    }, db.url);
    const ctx = await openContext({ ...loadConfig({}), databaseUrl: db.url }, { dataDir: undefined });
    try {
      for (let i = 0; i < 20; i++) await runDueJobs(ctx); // warm: connection, prepared statements
      const polls = 200;
      const started = performance.now();
      for (let i = 0; i < polls; i++) {
        if ((await runDueJobs(ctx)) !== 0) throw new Error('a job ran in the idle-poll measurement');
      }
      return { polls, msPerPoll: (performance.now() - started) / polls };
    } finally {
      await ctx.db.close();
    }
  } finally {
    await db.drop();
  }
}

function report(runs: Run[], idle: { polls: number; msPerPoll: number }): string {
  const groups = new Map<string, Run[]>();
  for (const r of runs) {
    const key = `${r.workers}/${r.batch}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows = [...groups.values()].map((g) => {
    const best = [...g].sort((a, b) => b.releasesPerSecond - a.releasesPerSecond)[0] as Run;
    return [
      String(best.workers),
      String(best.batch),
      fixed(best.releasesPerSecond),
      spread(g.map((r) => r.releasesPerSecond)),
      fixed(best.seconds, 1),
      fixed(best.workerCpuMs, 3),
      fixed(best.dbCpuMs, 3),
    ];
  });
  return [
    `Auto-release of ${TOTAL} transactions whose review windows have ended, PostgreSQL, ${REPEAT} run(s) ` +
      'per row: the best run, with the spread of releases/s over the runs',
    '',
    table(
      [
        ['workers', 9],
        ['batch', 7],
        ['releases/s', 12],
        ['spread', 13],
        ['seconds', 9],
        ['worker CPU ms/release', 23],
        ['db CPU ms/release', 19],
      ],
      rows,
    ),
    `every run: ${runs[0]?.checked ?? '-'}`,
    `idle poll (runDueJobs with nothing due, the ${TOTAL} jobs 60 days ahead): ` +
      `${idle.msPerPoll.toFixed(2)} ms per poll over ${idle.polls} polls`,
    `load average after the runs: ${loadAverage()}`,
  ].join('\n');
}

async function main(): Promise<void> {
  if (!(await postgresReachable())) throw new Error(`PostgreSQL not reachable at ${ADMIN_URL}`);
  log(`load average before the run: ${loadAverage()}`);
  const tps = args.pgbench ? await pgbenchTps() : undefined;
  if (tps !== undefined) log(`pgbench TPC-B (scale 10, 32 clients, 10 s) just before: ${tps.toFixed(0)} tps`);
  const template = REUSE_TEMPLATE ?? (await setupTemplate());
  if (KEEP_TEMPLATE) log(`template database kept: ${template} (reuse with --template ${template})`);
  const runs: Run[] = [];
  for (let i = 0; i < REPEAT; i++) {
    for (const workers of WORKERS) {
      for (const batch of BATCHES) {
        const r = await run(template, workers, batch);
        runs.push(r);
        log(
          `  ${workers} worker(s), batch ${batch}: ${r.releasesPerSecond.toFixed(0)} releases/s ` +
            `(${r.seconds.toFixed(1)} s; CPU per release: workers ${r.workerCpuMs.toFixed(3)} ms, ` +
            `database ${fixed(r.dbCpuMs, 3)} ms; load ${loadAverage()})`,
        );
      }
    }
  }
  const idle = await idlePoll(template);
  process.stdout.write(`${report(runs, idle)}\n`);
}

await runBenchmark('bench:scheduler', main);
