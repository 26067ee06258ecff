import { randomBytes } from 'node:crypto';
import type { Db } from '../store/db.ts';
import { getOrCreateSetting } from '../store/settings.ts';

/** The configured secret, or one generated on first start and kept in the database. */
export async function resolveServiceSecret(db: Db, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  return getOrCreateSetting(db, 'link_secret', () => randomBytes(32).toString('base64url'));
}
