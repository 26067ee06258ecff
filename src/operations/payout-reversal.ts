import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import type { PayoutView } from '../schemas/payouts.ts';
import { findPayout, lockPayout, lockPayoutTransactions } from '../store/payouts.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { payoutViewOf } from './payout-reads.ts';
import { reversePayout } from './payout-settle.ts';
import type { MerchantPrincipal } from './principal.ts';
import { requireTestMode } from './test-helpers.ts';

/**
 * POST /v1/test_helpers/payouts/{id}/reverse: the simulated rail reverses a paid payout (test
 * mode only), as a real rail may days after paying. Anything but a paid payout is a 409.
 */
export async function reversePayoutForTest(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  input: { idempotency_key?: string },
  headerKey: string | undefined,
): Promise<{ payout: PayoutView; replayed: boolean }> {
  requireTestMode(merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = { merchantId: merchant.merchantId, livemode: false };
  const now = merchantNow(ctx, merchant);
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      {
        owner,
        key,
        operation: `POST /v1/test_helpers/payouts/${id}/reverse`,
        fingerprint: requestFingerprint({}),
        now,
      },
      async () => {
        if (!(await findPayout(tx, owner, id))) throw notFound('payout', id);
        // Lock order: the payout's transactions (id order), then the payout.
        await lockPayoutTransactions(tx, id);
        const payout = await lockPayout(tx, id);
        if (!payout) throw notFound('payout', id);
        if (payout.status !== 'paid') {
          throw new ApiError('conflict', `Only a paid payout can be reversed; this one is ${payout.status}.`);
        }
        await reversePayout(ctx, tx, payout, now);
        return { status: 200, resourceType: 'payout', resourceId: id };
      },
    ),
  );
  return { payout: await payoutViewOf(ctx.db, owner, id), replayed: outcome.replayed };
}
