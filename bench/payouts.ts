/**
 * Payouts benchmark (npm run bench:payouts): how long one merchant's payout run takes with
 * 100,000 approved transactions, and its settlement, on PostgreSQL. See bench/README.md
 * ("Payouts") for the method and the figures.
 *
 * 1. Setup: a schema of its own in the PostgreSQL database, migrated by the service. A few template
 *    transactions go through the real API (create, pay by test card, confirm: approved for
 *    release), then each is cloned in bulk SQL up to --transactions: the transaction row (fresh id,
 *    merchant_reference, payment-link id and buyer-token hash) with its two journal rows (capture,
 *    approve) and its payment link. That is everything a payout reads; the clones' earlier events
 *    and payment attempts are left out. VACUUM ANALYZE.
 * 2. The run: the test clock passes midnight UTC and the payout_run job runs alone (runDueJobs,
 *    kind payout_run): every approved amount is batched with SKIP LOCKED into one payout (one line
 *    and one journal row per transaction), which the simulated rail accepts (in_transit).
 * 3. The settlement: the payout_settle job: one payout_paid journal row per line, every
 *    transaction paid out and moved confirmed → released (applyMoves, 2,000 per call: status
 *    update, transaction.status_changed and transaction.completed events), then payout.paid.
 * 4. Reads: GET /v1/payouts/{id} (1,000 lines embedded) and a page of GET /v1/payouts/{id}/lines.
 * 5. Checks: verifyLedger finds nothing wrong; one paid payout of every transaction; every
 *    transaction released/released; the events written.
 *
 * Options: --transactions 100000 --templates 4 --keep (keep the schema and print its name)
 *          --profile (time every statement of the run and the settlement; print where the time goes)
 * PostgreSQL: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openContext } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { ManualClock } from '../src/domain/clock.ts';
import { newId } from '../src/domain/ids.ts';
import { buildApp } from '../src/http/app.ts';
import { createRateLimiter } from '../src/http/rate-limit.ts';
import type { ServiceContext } from '../src/operations/context.ts';
import { createMerchant } from '../src/operations/manage-merchants.ts';
import { verifyLedger } from '../src/operations/verify-ledger.ts';
import type { Db, Queryable } from '../src/store/db.ts';
import { runDueJobs } from '../src/worker/run-due-jobs.ts';
import { cloneIdentity, cloneInto, cloneTransactionsWithLinks } from './lib/clone.ts';
import { loadAverage } from './lib/cpu.ts';
import { withInProcessApi } from './lib/in-process-api.ts';
import { runBenchmark } from './lib/processes.ts';
import { fixed, table } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    transactions: { type: 'string', default: '100000' },
    templates: { type: 'string', default: '4' },
    keep: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
});
const TOTAL = Number(args.transactions);
const TEMPLATES = Number(args.templates);
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const CHUNK = 10_000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (from: number) => (performance.now() - from) / 1000;

interface Template {
  id: string;
  ref: string;
  createdMs: number;
  link: string;
}

/** Template transactions made through the API: paid by card and confirmed (approved for release). */
async function makeTemplates(ctx: ServiceContext, key: string): Promise<Template[]> {
  await withInProcessApi(ctx, key, async (post) => {
    for (let i = 0; i < TEMPLATES; i++) {
      const { service_transaction_id: id } = await post('/v1/transactions', {
        amount: 750 + 125.5 * i,
        title: `Template ${i}: used phone, 128 GB`,
        merchant_reference: `payout-template-${i}`,
        merchant_order_id: `SO-${i}`,
      });
      await post(`/v1/test_helpers/transactions/${id}/pay`, {
        method: 'card',
        card_number: '4242424242424242',
      });
      const confirmed = await post(`/v1/transactions/${id}/confirm`, {});
      if (confirmed.status !== 'confirmed') throw new Error(`template ${id} is ${confirmed.status}`);
    }
  });
  const { rows } = await ctx.db.query<{
    id: string;
    merchant_reference: string;
    created_at: Date;
    payment_link_id: string;
  }>('SELECT id, merchant_reference, created_at, payment_link_id FROM transactions ORDER BY id');
  return rows.map((r) => ({
    id: r.id,
    ref: r.merchant_reference,
    createdMs: r.created_at.getTime(),
    link: r.payment_link_id,
  }));
}

const CLONE_MAP = `unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::text[]) AS c(old_txn, new_txn, new_ref, new_link, link_hash, buyer_hash, capture_id, approve_id, old_link)`;

/** Clones the templates up to TOTAL transactions, a chunk per database transaction. */
async function cloneTemplates(ctx: ServiceContext, templates: readonly Template[]): Promise<void> {
  const clones = TOTAL - templates.length;
  for (let start = 0; start < clones; start += CHUNK) {
    const map: string[][] = Array.from({ length: 9 }, () => []);
    for (let k = start; k < Math.min(clones, start + CHUNK); k++) {
      const t = templates[k % templates.length];
      if (!t) throw new Error('no templates');
      const clone = cloneIdentity(ctx.linkSecret, t.createdMs);
      const row = [
        t.id,
        clone.txn,
        `${t.ref}-${k}`,
        clone.link,
        clone.linkHash,
        clone.buyerHash,
        newId('ledgerEntry', t.createdMs),
        newId('ledgerEntry', t.createdMs),
        t.link,
      ];
      row.forEach((value, i) => {
        map[i]?.push(value);
      });
    }
    await ctx.db.transaction(async (tx) => {
      await cloneTransactionsWithLinks(tx, CLONE_MAP, map);
      await cloneInto(
        tx,
        'ledger_entries',
        `${CLONE_MAP} JOIN ledger_entries s ON s.transaction_id = c.old_txn AND s.kind IN ('capture', 'approve')`,
        {
          id: "CASE s.kind WHEN 'capture' THEN c.capture_id ELSE c.approve_id END",
          transaction_id: 'c.new_txn',
        },
        map,
      );
    });
    if ((start / CHUNK) % 2 === 1) log(`  cloned ${start + CHUNK + templates.length} transactions`);
  }
}

/** Statement timings of a step: total milliseconds per statement (its first words). */
type Profile = Map<string, { ms: number; calls: number }>;

/** The same database, timing every statement run inside its transactions into `profile`. */
function profiled(db: Db, profile: Profile): Db {
  const timed = (q: Queryable): Queryable => ({
    async query(sql, params) {
      const t0 = performance.now();
      try {
        return await q.query(sql, params);
      } finally {
        const name = sql.replace(/\s+/g, ' ').trim().slice(0, 70);
        const entry = profile.get(name) ?? { ms: 0, calls: 0 };
        entry.ms += performance.now() - t0;
        entry.calls += 1;
        profile.set(name, entry);
      }
    },
    exec: (sql) => q.exec(sql),
  });
  return {
    ...db,
    ...timed(db),
    kind: db.kind,
    transaction: (fn) => db.transaction((tx) => fn(timed(tx))),
    close: () => db.close(),
  };
}

function printProfile(title: string, profile: Profile, totalSeconds: number): void {
  const rows = [...profile.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8);
  process.stdout.write(
    `\n${title}: where the ${fixed(totalSeconds, 2)} s go (database statements, slowest first)\n`,
  );
  process.stdout.write(
    `${table(
      [
        ['statement', 72],
        ['calls', 7],
        ['ms', 9],
      ],
      rows.map(([sql, e]) => [sql, String(e.calls), fixed(e.ms)]),
    )}\n`,
  );
}

async function count(ctx: ServiceContext, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await ctx.db.query<{ n: number }>(sql, params);
  return rows[0]?.n ?? 0;
}

async function main(): Promise<void> {
  const schema = `bench_payouts_${randomBytes(4).toString('hex')}`;
  const clock = new ManualClock(new Date());
  const ctx = await openContext(
    { ...loadConfig({}), databaseUrl: DATABASE_URL },
    { clock, dataDir: undefined, schema },
  );
  try {
    log(`PostgreSQL ${new URL(DATABASE_URL).host}${new URL(DATABASE_URL).pathname}, schema ${schema}`);
    const setupStarted = performance.now();
    const merchant = await createMerchant(ctx, { name: 'Payout Bench', email: 'bench@example.com' });
    const templates = await makeTemplates(ctx, merchant.test_key);
    await cloneTemplates(ctx, templates);
    await ctx.db.exec('VACUUM ANALYZE');
    const approved = await count(
      ctx,
      `SELECT count(*)::int AS n FROM transactions
        WHERE merchant_id = $1 AND status = 'confirmed' AND amount_released_minor = amount_minor`,
      [merchant.merchant_id],
    );
    if (approved !== TOTAL) throw new Error(`setup made ${approved} approved transactions, not ${TOTAL}`);
    log(
      `setup: ${TOTAL} approved transactions (${TEMPLATES} through the API, the rest cloned) in ${fixed(seconds(setupStarted))} s`,
    );

    // The templates' approval scheduled the daily run at the next midnight UTC: go there.
    const now = clock.now();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    clock.advance((midnight - now.getTime()) / 1000 + 1);
    const filter = { merchantId: merchant.merchant_id, livemode: false };
    const loadBefore = loadAverage();

    const runProfile: Profile = new Map();
    const settleProfile: Profile = new Map();
    const plainDb = ctx.db;
    if (args.profile) ctx.db = profiled(plainDb, runProfile);
    let cpu = process.cpuUsage();
    let started = performance.now();
    const runs = await runDueJobs(ctx, { ...filter, kinds: ['payout_run'] });
    const runSeconds = seconds(started);
    const runCpu = process.cpuUsage(cpu);
    if (runs !== 1) throw new Error(`${runs} payout runs ran, not 1`);
    const { rows: payouts } = await ctx.db.query<{ id: string; status: string; line_count: number }>(
      'SELECT id, status, line_count FROM payouts WHERE merchant_id = $1',
      [merchant.merchant_id],
    );
    const payout = payouts[0];
    if (payouts.length !== 1 || !payout || payout.status !== 'in_transit' || payout.line_count !== TOTAL) {
      throw new Error(`after the run: ${JSON.stringify(payouts)}`);
    }
    log(`run: one payout of ${payout.line_count} lines, in transit, in ${fixed(runSeconds, 2)} s`);

    const eventsBefore = await count(ctx, 'SELECT count(*)::int AS n FROM events WHERE merchant_id = $1', [
      merchant.merchant_id,
    ]);
    if (args.profile) ctx.db = profiled(plainDb, settleProfile);
    cpu = process.cpuUsage();
    started = performance.now();
    const settles = await runDueJobs(ctx, { ...filter, kinds: ['payout_settle'] });
    const settleSeconds = seconds(started);
    const settleCpu = process.cpuUsage(cpu);
    ctx.db = plainDb;
    if (settles !== 1) throw new Error(`${settles} settlements ran, not 1`);
    const loadAfter = loadAverage();
    log(`settlement: paid, transactions released, in ${fixed(settleSeconds, 2)} s`);

    // Reads of the big payout, through the API.
    const app = await buildApp({
      ctx,
      rateLimiter: createRateLimiter(),
      defaultRateLimitPerMinute: 1_000_000,
      logger: false,
    });
    const timedGet = async (url: string) => {
      const t0 = performance.now();
      const res = await app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${merchant.test_key}` },
      });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      return { ms: performance.now() - t0, bytes: res.body.length };
    };
    await timedGet(`/v1/payouts/${payout.id}`);
    const one = await timedGet(`/v1/payouts/${payout.id}`);
    const page = await timedGet(`/v1/payouts/${payout.id}/lines?limit=100`);
    await app.close();

    // Checks.
    started = performance.now();
    const problems = await verifyLedger(ctx.db, { merchantId: merchant.merchant_id });
    const verifySeconds = seconds(started);
    if (problems.length > 0)
      throw new Error(`verifyLedger: ${problems.length} problems, e.g. ${JSON.stringify(problems[0])}`);
    const released = await count(
      ctx,
      `SELECT count(*)::int AS n FROM transactions WHERE merchant_id = $1 AND status = 'released'
          AND settlement_status = 'released' AND amount_paid_out_minor = amount_minor`,
      [merchant.merchant_id],
    );
    const { rows: events } = await ctx.db.query<{ type: string; n: number }>(
      `SELECT type, count(*)::int AS n FROM events WHERE merchant_id = $1 GROUP BY type ORDER BY type`,
      [merchant.merchant_id],
    );
    const eventsAfter = events.reduce((sum, e) => sum + e.n, 0);
    const byType = Object.fromEntries(events.map((e) => [e.type, e.n]));
    if (
      released !== TOTAL ||
      byType['transaction.completed'] !== TOTAL ||
      byType['payout.paid'] !== 1 ||
      eventsAfter - eventsBefore !== 2 * TOTAL + 1
    ) {
      throw new Error(`after the settlement: ${released} released, events ${JSON.stringify(byType)}`);
    }
    const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
    process.stdout.write(
      `\nPayouts: ${TOTAL} approved transactions of one merchant, PostgreSQL (${new URL(DATABASE_URL).host}), ` +
        `load average ${loadBefore} before, ${loadAfter} after\n\n`,
    );
    process.stdout.write(
      table(
        [
          ['step', 44],
          ['seconds', 8],
          ['per second', 11],
          ['node CPU s', 11],
        ],
        [
          [
            'payout run (batch, lines, journal, rail)',
            fixed(runSeconds, 2),
            fixed(TOTAL / runSeconds),
            fixed(cpuSeconds(runCpu), 2),
          ],
          [
            'settlement (paid, released, events)',
            fixed(settleSeconds, 2),
            fixed(TOTAL / settleSeconds),
            fixed(cpuSeconds(settleCpu), 2),
          ],
        ],
      ),
    );
    process.stdout.write(
      `\nGET /v1/payouts/{id} (1,000 lines, ${fixed(one.bytes / 1024)} KiB): ${fixed(one.ms)} ms; ` +
        `GET /v1/payouts/{id}/lines?limit=100: ${fixed(page.ms)} ms\n` +
        `checked: verifyLedger sound (${fixed(verifySeconds, 1)} s), ${released} transactions released/released, ` +
        `${eventsAfter - eventsBefore} events written (${TOTAL} status_changed, ${TOTAL} completed, 1 payout.paid)\n`,
    );
    if (args.profile) {
      printProfile('payout run', runProfile, runSeconds);
      printProfile('settlement', settleProfile, settleSeconds);
    }
  } finally {
    if (args.keep) log(`kept schema ${schema}`);
    else await ctx.db.query(`DROP SCHEMA "${schema}" CASCADE`);
    await ctx.db.close();
  }
}

await runBenchmark('bench:payouts', main);
