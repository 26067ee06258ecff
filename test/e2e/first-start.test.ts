import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import {
  childEnv,
  freshDatabase,
  ROOT,
  type RunningServer,
  startServer,
  type TestDatabase,
} from '../helpers/spawn.ts';

/** Runs a shell command line exactly as a user would paste it. */
function shell(command: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', ['-c', command], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a new user: npm start on an empty database, then the printed curl', () => {
  let db: TestDatabase;
  let first: RunningServer;

  before(async () => {
    db = await freshDatabase();
    // What README tells a new user to run; npm puts the pinned Node of node_modules/.bin on PATH.
    first = await startServer(db.env, { command: 'npm', args: ['start', '--silent'] });
  });
  after(async () => {
    await first.stop();
    await db.drop();
  });

  it('npm start runs `node bin/safehold.js serve`', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    assert.equal(pkg.scripts.start, 'node bin/safehold.js serve');
  });

  it('prints the demo merchant test key, an operator key and a curl aimed at the server', () => {
    const demo = first.demo;
    assert.ok(demo, `no first-start block in:\n${first.stdout()}`);
    assert.match(demo.merchantId, /^mch_/);
    assert.match(demo.testKey, /^sk_test_\w+$/);
    assert.match(demo.liveKey, /^sk_live_\w+$/);
    assert.match(demo.operatorKey, /^sk_op_\w+$/);
    assert.ok(demo.curl.startsWith(`curl -s ${first.url}/v1/transactions`), demo.curl);
    assert.ok(demo.curl.includes(`Bearer ${demo.testKey}`));
  });

  it('the printed curl, run as printed, creates a transaction (201)', async () => {
    const demo = first.demo;
    assert.ok(demo);
    const result = await shell(`${demo.curl} -w '\\n%{http_code}'`);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.at(-1), '201', result.stdout);
    const transaction = JSON.parse(lines.slice(0, -1).join('\n')) as Record<string, unknown>;
    assert.match(String(transaction.service_transaction_id), /^txn_/);
    assert.equal(transaction.status, 'pending_payment');
    assert.equal(transaction.amount, 1500.5);
    assert.ok(
      String(transaction.payment_link).startsWith(`${first.url}/pay/`),
      String(transaction.payment_link),
    );
  });

  it('the demo operator key authenticates over TCP', async () => {
    const res = await fetch(`${first.url}/v1/transactions`, {
      headers: { authorization: `Bearer ${first.demo?.operatorKey}` },
    });
    // An operator key is known (not 401) but cannot act for a merchant.
    assert.equal(res.status, 403);
  });

  it('a second start on the same database prints no new keys and the old test key still works', async () => {
    await first.stop();
    if (db.kind === 'pglite') {
      // The server closed its database cleanly: only a graceful shutdown releases the folder's lock.
      assert.equal(existsSync(join(db.env.DATA_DIR as string, LOCK_FILE)), false);
    }
    const second = await startServer(db.env);
    try {
      assert.equal(second.demo, undefined);
      assert.doesNotMatch(second.stdout(), /First start|sk_(test|live|op)_/);
      const res = await fetch(`${second.url}/v1/transactions`, {
        headers: { authorization: `Bearer ${first.demo?.testKey}` },
      });
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: Array<{ merchant_reference: string }> };
      assert.deepEqual(
        data.map((t) => t.merchant_reference),
        ['order-1001'],
      );
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
  });
});
