import { requestFingerprint } from '../domain/canonical-json.ts';
import { open, seal } from '../domain/secret-box.ts';
import { newSigningSecret } from '../domain/webhook-signature.ts';
import type { Queryable } from '../store/db.ts';
import type { Owner } from '../store/transactions.ts';
import { findSealedSecret, insertSecretIfMissing, replaceSecret } from '../store/webhook-secrets.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';

/**
 * The signing secret of a merchant and environment (resolutions 9): one secret signs every webhook
 * of that environment, to endpoints and callback URLs alike. It is kept sealed with a key derived
 * from the service secret and shown only when an endpoint is created or the secret is rotated.
 */
const PURPOSE = 'webhook signing secret';

export function sealSecret(ctx: Pick<ServiceContext, 'linkSecret'>, secret: string): string {
  return seal(ctx.linkSecret, PURPOSE, secret);
}

export function openSecret(ctx: Pick<ServiceContext, 'linkSecret'>, sealed: string): string {
  return open(ctx.linkSecret, PURPOSE, sealed);
}

/** The owner's secret, made on first use (concurrent first uses agree on one). */
export async function ensureWebhookSecret(
  ctx: Pick<ServiceContext, 'linkSecret'>,
  q: Queryable,
  owner: Owner,
  now: Date,
): Promise<string> {
  const existing = await findSealedSecret(q, owner);
  if (existing) {
    try {
      return openSecret(ctx, existing.sealed_secret);
    } catch {
      // Sealed under another service secret (SAFEHOLD_SECRET changed): unusable, so replaced.
      const secret = newSigningSecret();
      await replaceSecret(q, owner, sealSecret(ctx, secret), now);
      return secret;
    }
  }
  const row = await insertSecretIfMissing(q, owner, sealSecret(ctx, newSigningSecret()), now);
  return openSecret(ctx, row.sealed_secret);
}

export interface WebhookSecretView {
  object: 'webhook_secret';
  secret: string;
  livemode: boolean;
  created_at: string;
}

/**
 * POST /v1/webhook_secret/rotate: a new secret for the key's environment, in force at once for
 * every attempt sent from then on. A replay with the same idempotency key shows the current secret.
 */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: { idempotency_key?: string },
  headerKey: string | undefined,
): Promise<{ secret: WebhookSecretView; replayed: boolean }> {
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  return ctx.db.transaction(async (tx) => {
    const outcome = await runIdempotent(
      tx,
      {
        owner,
        key,
        operation: 'POST /v1/webhook_secret/rotate',
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        await replaceSecret(tx, owner, sealSecret(ctx, newSigningSecret()), now);
        return { status: 200, resourceType: 'webhook_secret', resourceId: merchant.merchantId };
      },
    );
    const row = await findSealedSecret(tx, owner);
    if (!row) throw new Error('webhook secret missing after rotation');
    return {
      secret: {
        object: 'webhook_secret',
        secret: openSecret(ctx, row.sealed_secret),
        livemode: merchant.livemode,
        created_at: row.created_at.toISOString(),
      },
      replayed: outcome.replayed,
    };
  });
}
