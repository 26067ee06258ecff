import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { authenticate } from '../../src/operations/authenticate.ts';
import { createTransaction } from '../../src/operations/create-transaction.ts';
import { createMerchant } from '../../src/operations/manage-merchants.ts';
import type { MerchantPrincipal } from '../../src/operations/principal.ts';
import { createWebhookEndpoint } from '../../src/operations/webhook-endpoints.ts';
import { childEnv, freshDatabase, NODE, ROOT, type TestDatabase } from '../helpers/spawn.ts';
import { type Receiver, startReceiver, waitFor } from './receiver.ts';

const EVENTS = 60;
const ANSWERED_BEFORE_HANG = 10;
const PER_ENDPOINT = 4;
const SECRET = 'crash-test-service-secret';

interface Worker {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `safehold serve --role worker` on the test database, once it says it is running. */
async function startWorker(db: TestDatabase): Promise<Worker> {
  const child = spawn(NODE, [join(ROOT, 'bin/safehold.js'), 'serve', '--role', 'worker'], {
    cwd: ROOT,
    env: childEnv({
      ...db.env,
      SAFEHOLD_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      WORKER_POLL_MS: '100',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_CONCURRENCY_PER_ENDPOINT: String(PER_ENDPOINT),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Safehold worker is running')) resolve();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    void exited.then(({ code }) => reject(new Error(`worker exited (${code}) before running:\n${output}`)));
  });
  return { child, exited };
}

describe('crash safety: a worker killed (SIGKILL) while delivering loses no event', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  const workers: Worker[] = [];
  const eventIds: string[] = [];

  before(async () => {
    db = await freshDatabase();
    // The first requests are answered, then the receiver hangs: those are in flight at the kill.
    receiver = await startReceiver((_, i) =>
      i < ANSWERED_BEFORE_HANG ? { status: 200 } : { status: 200, hang: true },
    );
    const ctx = await openContext(loadConfig({ ...db.env, SAFEHOLD_SECRET: SECRET }));
    try {
      const merchant = await createMerchant(ctx, { name: 'Crash test', email: 'crash@example.com' });
      const principal = (await authenticate(ctx, `Bearer ${merchant.test_key}`)) as MerchantPrincipal;
      await createWebhookEndpoint(ctx, principal, { url: `${receiver.url}/hooks` }, undefined);
      for (let i = 0; i < EVENTS; i++) {
        await createTransaction(ctx, principal, { amount: 10 + i, title: `Item ${i}` }, undefined);
      }
      const { rows } = await ctx.db.query<{ id: string }>('SELECT id FROM events ORDER BY id');
      eventIds.push(...rows.map((r) => r.id));
    } finally {
      await ctx.db.close();
    }
  });
  after(async () => {
    for (const w of workers)
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await receiver.close();
    await db.drop();
  });

  it('a second worker delivers every event, including those the first had sent but not recorded', async () => {
    assert.equal(eventIds.length, EVENTS);
    const first = await startWorker(db);
    workers.push(first);
    await waitFor(
      () => receiver.received.length >= ANSWERED_BEFORE_HANG + PER_ENDPOINT,
      'the first worker to have requests in flight',
      120_000,
    );
    const inFlight = receiver.received
      .slice(ANSWERED_BEFORE_HANG)
      .map((q) => String(q.headers['x-service-event-id']));
    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    receiver.answer = () => ({ status: 200 });
    receiver.release();

    const second = await startWorker(db);
    workers.push(second);
    const delivered = () => new Set(receiver.received.map((q) => String(q.headers['x-service-event-id'])));
    const times = (id: string) =>
      receiver.received.filter((q) => q.headers['x-service-event-id'] === id).length;
    // The requests in flight at the kill were never answered, so never recorded: once their
    // claims run out (WEBHOOK_TIMEOUT_MS * 2 + 5 s) the second worker sends them again.
    await waitFor(
      () => delivered().size === EVENTS && inFlight.every((id) => times(id) >= 2),
      'every event to arrive, the unrecorded ones again',
      120_000,
    );
    second.child.kill('SIGTERM');
    assert.equal((await second.exited).code, 0);

    assert.deepEqual([...delivered()].sort(), [...eventIds].sort(), 'every event, at least once');
    assert.equal(inFlight.length, PER_ENDPOINT, 'the kill came with requests in flight');
    const check = await db.open();
    try {
      const { rows } = await check.query<{ status: string; n: bigint }>(
        'SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status',
      );
      assert.deepEqual(
        rows.map((r) => [r.status, Number(r.n)]),
        [['succeeded', EVENTS]],
      );
      const queued = await check.query<{ n: bigint }>('SELECT count(*) AS n FROM events_to_fan_out');
      assert.equal(Number(queued.rows[0]?.n), 0);
    } finally {
      await check.close();
    }
  });
});
