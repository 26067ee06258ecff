import type { Queryable } from './db.ts';

/** Reads a service setting, creating it with make() the first time (first writer wins under races). */
export async function getOrCreateSetting(q: Queryable, name: string, make: () => string): Promise<string> {
  await q.query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    make(),
  ]);
  const { rows } = await q.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
  const value = rows[0]?.value;
  if (value === undefined) throw new Error(`setting ${name} vanished`);
  return value;
}
