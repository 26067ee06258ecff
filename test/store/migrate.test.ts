import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Db } from '../../src/store/db.ts';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import { openDatabase } from '../../src/store/open.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const ALL = loadMigrations().map((m) => m.name);

/** A fresh database of the kind this run uses: its own PostgreSQL schema, or in-memory PGlite. */
async function withFreshDb(fn: (db: Db, schema: string | undefined) => Promise<void>): Promise<void> {
  const schema = DATABASE_URL ? `m_${randomBytes(6).toString('hex')}` : undefined;
  const db = await openDatabase({ databaseUrl: DATABASE_URL, dataDir: undefined, schema });
  try {
    await fn(db, schema);
  } finally {
    if (schema) await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    await db.close();
  }
}

async function recorded(db: Db): Promise<Array<{ version: number; name: string }>> {
  const { rows } = await db.query<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations ORDER BY version',
  );
  return rows;
}

describe('migrate()', () => {
  it('applies every numbered migration once, in order, and is a no-op the second time', async () => {
    await withFreshDb(async (db) => {
      assert.ok(ALL.length > 0);
      assert.deepEqual(await migrate(db), ALL);
      assert.deepEqual(await migrate(db), []);
      assert.deepEqual(
        await recorded(db),
        loadMigrations().map((m) => ({ version: m.version, name: m.name })),
      );
    });
  });

  it('applies only what is new, each in its own transaction', async () => {
    await withFreshDb(async (db) => {
      const [first, ...rest] = loadMigrations();
      assert.ok(first);
      assert.deepEqual(await migrate(db, [first]), [first.name]);
      const broken = {
        version: 9_999,
        name: '9999_broken.sql',
        sql: 'CREATE TABLE half_done (id int); SELECT 1/0;',
      };
      await assert.rejects(migrate(db, [first, ...rest, broken]), /division by zero/);
      // The good ones committed; the broken one left nothing behind and is not recorded.
      assert.deepEqual(
        (await recorded(db)).map((r) => r.name),
        ALL,
      );
      const { rows } = await db.query<{ t: string | null }>("SELECT to_regclass('half_done')::text AS t");
      assert.equal(rows[0]?.t, null);
    });
  });

  it('on a reopened PGlite folder, finds its migrations recorded and applies nothing', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'safehold-migrate-'));
    try {
      const first = await openDatabase({ databaseUrl: undefined, dataDir });
      assert.deepEqual(await migrate(first), ALL);
      await first.close();
      const again = await openDatabase({ databaseUrl: undefined, dataDir });
      try {
        assert.deepEqual(await migrate(again), []);
        // The driver reports a SELECT's row count as pg does (PGlite itself says 0 affected rows).
        const { rowCount } = await again.query('SELECT version FROM schema_migrations');
        assert.equal(rowCount, ALL.length);
      } finally {
        await again.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('on PostgreSQL, concurrent openers and migrators of one new schema each succeed and record every migration once', {
    skip: DATABASE_URL ? false : 'DATABASE_URL is not set: PostgreSQL-only test',
  }, async () => {
    // Several rounds, as the race is a matter of milliseconds.
    for (let round = 0; round < 3; round++) {
      const schema = `m_${randomBytes(6).toString('hex')}`;
      // Pools creating one schema at once (CREATE SCHEMA IF NOT EXISTS alone races), then migrating it.
      const dbs = await Promise.all(
        Array.from({ length: 6 }, () =>
          openDatabase({ databaseUrl: DATABASE_URL, dataDir: undefined, schema }),
        ),
      );
      try {
        const applied = await Promise.all(dbs.map((db) => migrate(db)));
        assert.deepEqual(
          applied.flat().sort(),
          [...ALL].sort(),
          'each migration applied by exactly one of them',
        );
        assert.deepEqual(
          (await recorded(dbs[0] as Db)).map((r) => r.name),
          ALL,
        );
      } finally {
        await (dbs[0] as Db).query(`DROP SCHEMA "${schema}" CASCADE`);
        await Promise.all(dbs.map((db) => db.close()));
      }
    }
  });
});
