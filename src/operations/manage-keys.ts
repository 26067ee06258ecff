import {
  generateKey,
  hashSecret,
  type KeyKind,
  keyHint,
  ROTATION_GRACE_MS,
  SCOPES,
  type Scope,
} from '../domain/api-keys.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { findKey, insertApiKey, markRevoked, markRotated } from '../store/api-keys.ts';
import type { Queryable } from '../store/db.ts';
import { findMerchant } from '../store/merchants.ts';
import type { ServiceContext } from './context.ts';

export interface IssuedKey {
  key_id: string;
  key: string;
}

export async function issueKey(
  q: Queryable,
  now: Date,
  kind: KeyKind,
  merchantId: string | null,
  scopes: readonly Scope[],
): Promise<IssuedKey> {
  const key = generateKey(kind);
  const id = newId('apiKey');
  await insertApiKey(q, {
    id,
    kind,
    merchant_id: merchantId,
    key_hash: hashSecret(key),
    key_hint: keyHint(key),
    scopes: [...scopes],
    created_at: now,
  });
  return { key_id: id, key };
}

export async function createKey(
  ctx: ServiceContext,
  options: { merchantId: string; env: 'test' | 'live'; scopes?: readonly Scope[] },
): Promise<IssuedKey> {
  const merchant = await findMerchant(ctx.db, options.merchantId);
  if (!merchant) throw new ApiError('not_found', `No such merchant: '${options.merchantId}'.`);
  return issueKey(ctx.db, ctx.clock.now(), options.env, merchant.id, options.scopes ?? SCOPES);
}

export async function createOperatorKey(ctx: ServiceContext): Promise<IssuedKey> {
  return issueKey(ctx.db, ctx.clock.now(), 'operator', null, []);
}

/** A new key with the same merchant, environment and scopes; the old one lives 24 more hours. */
export async function rotateKey(
  ctx: ServiceContext,
  keyId: string,
): Promise<IssuedKey & { previous_key_expires_at: string }> {
  return ctx.db.transaction(async (tx) => {
    const old = await findKey(tx, keyId);
    if (!old) throw new ApiError('not_found', `No such key: '${keyId}'.`);
    const now = ctx.clock.now();
    const scopes = old.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    const issued = await issueKey(tx, now, old.kind, old.merchant_id, scopes);
    const expiresAt = new Date(now.getTime() + ROTATION_GRACE_MS);
    if (!(await markRotated(tx, keyId, expiresAt, issued.key_id))) {
      throw new ApiError('conflict', `Key '${keyId}' is revoked or was already rotated.`);
    }
    return { ...issued, previous_key_expires_at: expiresAt.toISOString() };
  });
}

export async function revokeKey(ctx: ServiceContext, keyId: string): Promise<void> {
  const key = await findKey(ctx.db, keyId);
  if (!key) throw new ApiError('not_found', `No such key: '${keyId}'.`);
  await markRevoked(ctx.db, keyId, ctx.clock.now());
}
