import type { Static } from 'typebox';
import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import type { TransactionView } from '../schemas/transaction.ts';
import type { TestClockObject, TestPayInput } from '../schemas/transaction-actions.ts';
import { releaseIdempotencyKey } from '../store/idempotency.ts';
import { advanceTestClock, findMerchantClock } from '../store/merchant-clock.ts';
import { findTransaction } from '../store/transactions.ts';
import { runDueJobs } from '../worker/run-due-jobs.ts';
import { runAllDue } from '../worker/run-due-webhooks.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { startPayment } from './payments.ts';
import type { MerchantPrincipal } from './principal.ts';
import { transactionView } from './transaction-view.ts';

export function requireTestMode(merchant: MerchantPrincipal): void {
  if (merchant.livemode) {
    throw new ApiError('permission_denied', 'Test helpers work only with test keys (sk_test_).');
  }
}

/**
 * Moves the merchant's test clock forward and answers only after every piece of work due by the
 * new time has run (releases, expiries, payment timeouts, webhook attempts and alerts, ...).
 */
export async function advanceClock(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: { seconds: number; idempotency_key?: string },
  headerKey: string | undefined,
): Promise<Static<typeof TestClockObject>> {
  requireTestMode(merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = { merchantId: merchant.merchantId, livemode: false };
  await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      {
        owner,
        key,
        operation: 'POST /v1/test_helpers/clock/advance',
        fingerprint: requestFingerprint(input),
        now: ctx.clock.now(),
      },
      async () => {
        await advanceTestClock(tx, merchant.merchantId, input.seconds * 1000);
        return { status: 200, resourceType: 'test_clock', resourceId: merchant.merchantId };
      },
    ),
  );
  // Also on a replay: whatever is due by now runs before the answer, webhook attempts included.
  const jobsRun = await runAllDue(ctx, { merchantId: merchant.merchantId, livemode: false });
  const offset = await findMerchantClock(ctx.db, merchant.merchantId);
  return {
    object: 'test_clock',
    now: new Date(ctx.clock.now().getTime() + offset).toISOString(),
    offset_seconds: offset / 1000,
    jobs_run: jobsRun,
  };
}

/**
 * Pays a test transaction without the checkout page, with the page's outcomes: the simulated
 * rail's callback (or its timeout) is delivered at once instead of after its delay.
 */
export async function payForTest(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  input: TestPayInput,
  headerKey: string | undefined,
): Promise<{ transaction: TransactionView; replayed: boolean }> {
  requireTestMode(merchant);
  const owner = { merchantId: merchant.merchantId, livemode: false };
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  if (key !== undefined) {
    // Claims the key (or finds its earlier use) before any money moves.
    const claimed = await ctx.db.transaction((tx) =>
      runIdempotent(
        tx,
        {
          owner,
          key,
          operation: `POST /v1/test_helpers/transactions/${id}/pay`,
          fingerprint: requestFingerprint(input),
          now: ctx.clock.now(),
        },
        async () => ({
          status: 200,
          resourceType: 'transaction',
          resourceId: id,
        }),
      ),
    );
    if (claimed.replayed) {
      const row = await findTransaction(ctx.db, owner, id);
      if (!row) throw notFound('transaction', id);
      return { transaction: transactionView(ctx, row), replayed: true };
    }
  }
  try {
    if (!(await findTransaction(ctx.db, owner, id))) throw notFound('transaction', id);
    const attempt = await startPayment(ctx, id, {
      method: input.method,
      phone: input.phone,
      card_number: input.card_number,
    });
    // A push's simulated callback arrives now instead of after its delay; a push that gets none
    // (…1037) times out now. A 3-D Secure card stays requires_action for its challenge page.
    if (attempt.status === 'pending') {
      const answered = await runDueJobs(ctx, { subjectId: attempt.id, kinds: ['rail_callback'] });
      if (answered === 0) await runDueJobs(ctx, { subjectId: attempt.id, kinds: ['payment_timeout'] });
    }
  } catch (error) {
    // A request that failed leaves no key behind, so a retry with it runs afresh.
    if (key !== undefined) await releaseIdempotencyKey(ctx.db, { ...owner, key });
    throw error;
  }
  const row = await findTransaction(ctx.db, owner, id);
  if (!row) throw notFound('transaction', id);
  return { transaction: transactionView(ctx, row), replayed: false };
}
