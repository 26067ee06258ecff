import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import { freshDatabase, runCli, startServer } from '../helpers/spawn.ts';

describe('start-up failures', () => {
  it('a port in use exits 1 saying so, and the next start still shows the first-start keys', async () => {
    const db = await freshDatabase();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const failed = await runCli(['serve'], { ...db.env, PORT: String(port) });
      assert.equal(failed.code, 1, failed.stdout);
      assert.match(failed.stderr, new RegExp(`Port ${port} on 127.0.0.1 is already in use`));
      assert.doesNotMatch(failed.stdout, /sk_test_/);
      if (db.kind === 'pglite') {
        assert.equal(
          existsSync(join(db.env.DATA_DIR as string, LOCK_FILE)),
          false,
          'the folder was released',
        );
      }

      const server = await startServer(db.env);
      try {
        assert.ok(server.demo, 'the keys were not used up by the failed start');
        const res = await fetch(`${server.url}/v1/transactions`, {
          headers: { authorization: `Bearer ${server.demo.testKey}` },
        });
        assert.equal(res.status, 200);
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    } finally {
      blocker.close();
      await db.drop();
    }
  });

  it('invalid settings exit 1 naming the variable, before touching any database', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'eighty' }, /PORT must be a whole number >= 0, got 'eighty'/],
      [{ DATABASE_SCHEMA: 'x; DROP TABLE merchants' }, /DATABASE_SCHEMA must be a lower-case identifier/],
    ];
    await Promise.all(
      cases.map(async ([env, message]) => {
        const result = await runCli(['serve'], { ...env, DATA_DIR: '/proc/safehold-must-not-open' });
        assert.equal(result.code, 1);
        assert.match(result.stderr, message);
      }),
    );
  });
});
