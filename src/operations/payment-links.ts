import type { Static } from 'typebox';
import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { linkToken, tokenHash } from '../domain/link-tokens.ts';
import type { CreatePaymentLinkInput, PaymentLinkObject } from '../schemas/transaction-actions.ts';
import { findPaymentLink, insertPaymentLink, type PaymentLinkRow } from '../store/payment-links.ts';
import { findTransaction } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { paymentLinkUrl } from './transaction-view.ts';
import { lockOwnedTransaction } from './transition-transaction.ts';

type PaymentLinkView = Static<typeof PaymentLinkObject>;

function linkView(
  ctx: ServiceContext,
  link: PaymentLinkRow,
  transactionStatus: string,
  now: Date,
): PaymentLinkView {
  const status =
    transactionStatus !== 'pending_payment'
      ? 'completed'
      : link.expires_at.getTime() <= now.getTime()
        ? 'expired'
        : 'active';
  return {
    object: 'payment_link',
    id: link.id,
    url: paymentLinkUrl(ctx, link.id),
    service_transaction_id: link.transaction_id,
    expires_at: link.expires_at.toISOString(),
    status,
    livemode: link.livemode,
    created_at: link.created_at.toISOString(),
  };
}

/** A fresh share-safe checkout link for a transaction that is still waiting for payment. */
export async function createPaymentLink(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: CreatePaymentLinkInput,
  headerKey: string | undefined,
): Promise<{ link: PaymentLinkView; replayed: boolean }> {
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      { owner, key, operation: 'POST /v1/payment_links', fingerprint: requestFingerprint(input), now },
      async () => {
        const row = await lockOwnedTransaction(tx, owner, input.service_transaction_id);
        if (row.status !== 'pending_payment') {
          throw new ApiError(
            'conflict',
            `A payment link needs a transaction waiting for payment; this one is ${row.status}.`,
          );
        }
        const id = newId('paymentLink', now.getTime());
        await insertPaymentLink(tx, {
          id,
          transaction_id: row.id,
          merchant_id: row.merchant_id,
          livemode: row.livemode,
          token_hash: tokenHash(linkToken(ctx.linkSecret, id)),
          expires_at: new Date(now.getTime() + (input.expires_in_seconds ?? ctx.paymentWindowSeconds) * 1000),
          created_at: now,
        });
        return { status: 201, resourceType: 'payment_link', resourceId: id };
      },
    ),
  );
  const link = await findPaymentLink(ctx.db, outcome.resourceId);
  const txn = link && (await findTransaction(ctx.db, owner, link.transaction_id));
  if (!link || !txn) throw notFound('payment_link', outcome.resourceId);
  return { link: linkView(ctx, link, txn.status, now), replayed: outcome.replayed };
}
