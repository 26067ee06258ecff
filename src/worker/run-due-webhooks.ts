import type { ServiceContext } from '../operations/context.ts';
import {
  claimWebhookSends,
  leaseMs,
  recordWebhookAttempts,
  sendWebhook,
} from '../operations/webhook-delivery.ts';
import { webhookSettings } from '../operations/webhook-settings.ts';
import { type ClaimFilter, countDueJobs } from '../store/jobs.ts';
import { countClaimedDue, type DeliveryFilter } from '../store/webhook-deliveries.ts';
import { runDueJobs } from './run-due-jobs.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends every webhook attempt due by now (on each merchant's clock) for the filter, and returns
 * once all of them are recorded, including those another worker was sending when it started.
 * Returns how many attempts this call made. The test clock uses it; so can a test.
 */
export async function runDueWebhooks(ctx: ServiceContext, filter: DeliveryFilter = {}): Promise<number> {
  const settings = webhookSettings(ctx);
  let attempts = 0;
  const waitUntil = Date.now() + leaseMs(ctx);
  for (;;) {
    const { jobs, events } = await claimWebhookSends(ctx, { ...filter, capacity: settings.concurrency });
    if (jobs.length > 0) {
      // One round: at most perEndpoint to a target and `concurrency` in all, as the dispatcher.
      const outcomes = await Promise.all(jobs.map((job) => sendWebhook(ctx, job)));
      await recordWebhookAttempts(ctx, outcomes);
      attempts += outcomes.length;
      continue;
    }
    if (events > 0) continue;
    if (Date.now() < waitUntil && (await countClaimedDue(ctx.db, ctx.clock.now(), filter)) > 0) {
      await sleep(20);
      continue;
    }
    return attempts;
  }
}

/** How long the test clock waits for due jobs another worker is running (a payout run, say). */
const WAIT_FOR_OTHERS_MS = 30_000;

/**
 * Everything due by now for the filter: jobs (moves write events), then webhooks (failures schedule
 * alert jobs), until neither has work left, including due jobs another worker (the server's own)
 * was running meanwhile: those are skipped by the claim, so this waits until they are done.
 * Returns the number of jobs run here.
 */
export async function runAllDue(
  ctx: ServiceContext,
  filter: Omit<ClaimFilter, 'limit'> = {},
): Promise<number> {
  let jobs = 0;
  const waitUntil = Date.now() + WAIT_FOR_OTHERS_MS;
  for (;;) {
    const ran = await runDueJobs(ctx, filter);
    jobs += ran;
    const sent = await runDueWebhooks(ctx, { merchantId: filter.merchantId, livemode: filter.livemode });
    if (ran > 0 || sent > 0) continue;
    if (Date.now() < waitUntil && (await countDueJobs(ctx.db, ctx.clock.now(), filter)) > 0) {
      await sleep(20);
      continue;
    }
    return jobs;
  }
}
