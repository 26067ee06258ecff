import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';

const url = process.env.DATABASE_URL;

describe('PostgreSQL driver: prepared statements', { skip: url ? false : 'needs DATABASE_URL' }, () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let db: Db;
  // Stands for another process (a newer version) migrating the same database.
  let other: Db;

  before(async () => {
    // One connection, so every query lands on the connection that prepared the statement.
    db = await openPostgres({ connectionString: url ?? '', schema, poolSize: 1 });
    other = await openPostgres({ connectionString: url ?? '', schema, poolSize: 1 });
    await db.exec('CREATE TABLE widgets (id int PRIMARY KEY)');
    await db.query('INSERT INTO widgets (id) VALUES ($1)', [1]);
  });

  after(async () => {
    await other.close();
    await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    await db.close();
  });

  it('prepares each SQL text once per connection', async () => {
    const sql = 'SELECT id FROM widgets WHERE id = $1';
    await db.query(sql, [1]);
    await db.query(sql, [1]);
    const { rows } = await db.query<{ count: string }>(
      'SELECT count(*)::text AS count FROM pg_prepared_statements WHERE statement = $1',
      [sql],
    );
    assert.equal(rows[0]?.count, '1');
  });

  it('answers a statement read with * after another process added a column, by preparing it afresh', async () => {
    const sql = 'SELECT * FROM widgets WHERE id = $1';
    assert.deepEqual((await db.query(sql, [1])).rows, [{ id: 1 }]);
    await other.exec("ALTER TABLE widgets ADD COLUMN colour text NOT NULL DEFAULT 'red'");
    assert.deepEqual((await db.query(sql, [1])).rows, [{ id: 1, colour: 'red' }]);
  });

  it('fails a transaction that meets a stale statement once, and runs it afresh the next time', async () => {
    const sql = 'SELECT * FROM widgets WHERE id = $1';
    await db.transaction((tx) => tx.query(sql, [1]));
    await other.exec('ALTER TABLE widgets ADD COLUMN size int NOT NULL DEFAULT 3');
    await assert.rejects(
      db.transaction((tx) => tx.query(sql, [1])),
      /cached plan must not change result type/,
    );
    const { rows } = await db.transaction((tx) => tx.query(sql, [1]));
    assert.deepEqual(rows, [{ id: 1, colour: 'red', size: 3 }]);
  });
});
