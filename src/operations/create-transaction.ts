import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { buyerToken, linkToken, tokenHash } from '../domain/link-tokens.ts';
import { buildNewTransaction } from '../domain/new-transaction.ts';
import { INITIAL_STATE } from '../domain/transaction-states.ts';
import type { CreateTransactionInput, TransactionView } from '../schemas/transaction.ts';
import type { Queryable } from '../store/db.ts';
import {
  findTransaction,
  findTransactionByReference,
  insertTransactionWithLinkAndEvent,
  newTransactionRow,
  type TransactionRow,
} from '../store/transactions.ts';
import { assertPublicUrl } from './callback-url-guard.ts';
import type { ServiceContext } from './context.ts';
import { transactionEvent } from './event-payloads.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { transactionView } from './transaction-view.ts';

export interface CreateTransactionResult {
  transaction: TransactionView;
  /** True when an earlier identical request (by idempotency key or merchant_reference) is replayed. */
  replayed: boolean;
}

const OPERATION = 'POST /v1/transactions';

/**
 * Creates a protected transaction in pending_payment with its payment link and its
 * transaction.created event, all in one database transaction.
 */
export async function createTransaction(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: CreateTransactionInput,
  headerKey: string | undefined,
): Promise<CreateTransactionResult> {
  const now = merchantNow(ctx, merchant);
  const fresh = buildNewTransaction(input, {
    defaultCurrency: merchant.defaultCurrency,
    livemode: merchant.livemode,
    now,
  });
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  if (fresh.callbackUrl && merchant.livemode) await assertPublicUrl(fresh.callbackUrl, 'callback_url');

  const owner = ownerOf(merchant);
  const fingerprint = requestFingerprint(input);

  // Without an idempotency key the create is one statement, atomic by itself, so it runs without
  // BEGIN and COMMIT; with a key, the key's claim and completion share a transaction with it.
  let created: TransactionRow | undefined;
  const run = (q: Queryable) =>
    runIdempotent(q, { owner, key, operation: OPERATION, fingerprint: fingerprint, now }, async () => {
      const id = newId('transaction', now.getTime());
      const linkId = newId('paymentLink', now.getTime());
      const fields = newTransactionRow({
        id,
        merchant_id: merchant.merchantId,
        livemode: merchant.livemode,
        merchant_reference: fresh.merchantReference,
        merchant_order_id: fresh.merchantOrderId,
        status: INITIAL_STATE.status,
        settlement_status: INITIAL_STATE.settlement,
        amount_minor: fresh.amountMinor,
        currency: fresh.currency,
        title: fresh.title,
        vertical: fresh.vertical,
        customer: fresh.customer,
        seller: fresh.seller,
        release_condition: fresh.releaseCondition,
        callback_url: fresh.callbackUrl,
        metadata: fresh.metadata,
        payment_link_id: linkId,
        buyer_token_hash: tokenHash(buyerToken(ctx.linkSecret, id)),
        request_fingerprint: fingerprint,
        created_at: now,
      });
      const row = await insertTransactionWithLinkAndEvent(
        q,
        fields,
        {
          id: linkId,
          transaction_id: id,
          merchant_id: merchant.merchantId,
          livemode: merchant.livemode,
          token_hash: tokenHash(linkToken(ctx.linkSecret, linkId)),
          expires_at: new Date(now.getTime() + ctx.paymentWindowSeconds * 1000),
          created_at: now,
        },
        transactionEvent(ctx, 'transaction.created', fields, now),
        {
          jobId: newId('job', now.getTime()),
          runAt: new Date(now.getTime() + ctx.paymentWindowSeconds * 1000),
        },
      );
      if (!row) {
        // merchant_reference already taken: the same body is a replay, another body a conflict.
        const existing = await findTransactionByReference(q, owner, fresh.merchantReference ?? '');
        if (!existing || existing.request_fingerprint !== fingerprint) {
          throw new ApiError(
            'conflict',
            `merchant_reference '${fresh.merchantReference}' is already used by another transaction with a different request.`,
            { param: 'merchant_reference' },
          );
        }
        return { status: 200, resourceType: 'transaction', resourceId: existing.id };
      }
      created = row;
      return { status: 201, resourceType: 'transaction', resourceId: id };
    });
  const outcome = key === undefined ? await run(ctx.db) : await ctx.db.transaction(run);

  // A fresh create answers with the row it inserted; a replay reads the committed original.
  const row = created ?? (await findTransaction(ctx.db, owner, outcome.resourceId));
  if (!row) throw new Error(`transaction ${outcome.resourceId} vanished after create`);
  return { transaction: transactionView(ctx, row), replayed: outcome.replayed || outcome.status === 200 };
}
