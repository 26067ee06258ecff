import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadMigrations } from '../../src/store/migrate.ts';
import { freshDatabase, runCli } from '../helpers/spawn.ts';

const SKIP = process.env.DATABASE_URL
  ? false
  : 'DATABASE_URL is not set: two processes can share only a PostgreSQL database (a PGlite folder is locked to one)';

describe('safehold migrate run by two processes at once', () => {
  it('both exit 0 and every migration is applied and recorded exactly once', { skip: SKIP }, async () => {
    const db = await freshDatabase('postgres');
    try {
      const results = await Promise.all([runCli(['migrate'], db.env), runCli(['migrate'], db.env)]);
      for (const r of results) assert.equal(r.code, 0, r.stderr);

      const all = loadMigrations().map((m) => m.name);
      const applied = results.flatMap((r) => {
        const line = r.stdout.trim();
        return line === 'database is up to date' ? [] : line.replace(/^applied: /, '').split(', ');
      });
      assert.deepEqual(applied.sort(), [...all].sort(), 'each migration applied by one process only');

      const store = await db.open();
      try {
        const { rows } = await store.query<{ name: string; n: bigint }>(
          'SELECT name, count(*) AS n FROM schema_migrations GROUP BY name ORDER BY name',
        );
        assert.deepEqual(
          rows,
          all.map((name) => ({ name, n: 1n })),
        );
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
});
