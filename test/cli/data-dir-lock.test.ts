import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import {
  cliJson,
  freshDatabase,
  type RunningServer,
  runCli,
  startServer,
  type TestDatabase,
} from '../helpers/spawn.ts';

/** PGlite only: a folder one server holds must never be opened by a second process. */
describe('a CLI command on a PGlite folder that a running server holds', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let dataDir: string;
  let testKey: string;
  const create = (ref: string) =>
    fetch(`${server.url}/v1/transactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 100, title: 'Chair', merchant_reference: ref }),
    });

  before(async () => {
    db = await freshDatabase('pglite');
    dataDir = db.env.DATA_DIR as string;
    server = await startServer(db.env);
    testKey = server.demo?.testKey as string;
    assert.equal((await create('before-cli')).status, 201);
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  it('exits 1 saying the folder is in use by the server, with its pid', async () => {
    for (const args of [
      ['merchant', 'create', '--name', 'Intruder', '--email', 'i@example.com', '--json'],
      ['migrate'],
    ]) {
      const result = await runCli(args, db.env);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        new RegExp(`is in use by another Safehold process \\(pid ${server.child.pid}\\)`),
      );
      assert.equal(result.stdout, '');
    }
  });

  it('leaves the server answering and its lock in place', async () => {
    assert.equal((await create('after-cli')).status, 201);
    const list = await fetch(`${server.url}/v1/transactions`, {
      headers: { authorization: `Bearer ${testKey}` },
    });
    assert.equal(list.status, 200);
    const refs = ((await list.json()) as { data: Array<{ merchant_reference: string }> }).data.map(
      (t) => t.merchant_reference,
    );
    assert.deepEqual(refs.sort(), ['after-cli', 'before-cli']);
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), true);
  });

  it('works once the server has stopped, on an intact folder', async () => {
    const { code } = await server.stop();
    assert.equal(code, 0);
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'the server released its lock');
    const created = await cliJson<{ merchant_id: string }>(
      ['merchant', 'create', '--name', 'After', '--email', 'a@example.com'],
      db.env,
    );
    assert.match(created.merchant_id, /^mch_/);
    const store = await db.open();
    try {
      const { rows } = await store.query<{ merchants: bigint; transactions: bigint }>(
        'SELECT (SELECT count(*) FROM merchants) AS merchants, (SELECT count(*) FROM transactions) AS transactions',
      );
      assert.deepEqual(rows[0], { merchants: 2n, transactions: 2n });
    } finally {
      await store.close();
    }
  });

  it('takes over a lock file left by a process that died', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']);
    writeFileSync(join(dataDir, LOCK_FILE), String(dead.pid));
    const result = await runCli(['operator', 'create', '--json'], db.env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"operator_key":"sk_op_/);
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false);
  });
});
