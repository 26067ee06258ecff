import { EVENT_RETENTION_MS } from '../domain/webhooks.ts';
import type { MailMessage } from '../mail/mailer.ts';
import type { Queryable } from '../store/db.ts';
import { oldestEventTime, purgeEvents } from '../store/event-reads.ts';
import { type ClaimedJob, newJob } from '../store/jobs.ts';
import { findMerchant } from '../store/merchants.ts';
import { replaceRunningJob } from '../store/webhook-jobs.ts';
import type { ServiceContext } from './context.ts';

/** The worker's webhook jobs: failing-target alerts and the 30-day purge of events. */

/** Events deleted per run; a purge with more to do runs again at once. */
const PURGE_CHUNK = 5_000;
/** After a purge, the next is due when the oldest event left turns 30 days old, at most hourly. */
const PURGE_MIN_GAP_MS = 60 * 60 * 1000;

export function alertMessage(to: string, job: Pick<ClaimedJob, 'livemode' | 'payload'>): MailMessage {
  const p = job.payload as Record<string, string | undefined>;
  const mode = job.livemode ? 'live mode' : 'test mode';
  const isEndpoint = p.target === 'webhook_endpoint';
  const what = isEndpoint ? `webhook endpoint ${p.endpoint_id} (${p.url})` : `callback URLs on ${p.origin}`;
  return {
    to,
    subject: isEndpoint
      ? `Safehold webhooks failing (${mode}): ${p.url}`
      : `Safehold callback URL failing (${mode}): ${p.origin}`,
    text: [
      `Safehold could not deliver event ${p.event_id} to ${p.url} (${mode}).`,
      `All 5 attempts failed over about 2.5 hours; the last, at ${p.failed_at}, ended with: ${p.last_error}.`,
      '',
      `The ${what} is now flagged "failing". Other events are still sent, each with its retries, and`,
      'the next successful delivery clears the flag. You get at most one such e-mail per endpoint',
      '(or callback host) every 24 hours.',
      '',
      'To see every event whose delivery failed:   GET /v1/events?delivery_failed=true',
      `To send this one again once it is fixed:     POST /v1/events/${p.event_id}/redeliver`,
      '',
      'Webhooks are answered with a 2xx within 10 seconds, redirects are not followed. See the',
      'webhook guide (docs/webhooks.md) for verification, retries and deduplication.',
    ].join('\n'),
  };
}

/** E-mails the merchant (or logs it, without SMTP_URL). A failed send keeps the job for a retry. */
async function runAlert(ctx: ServiceContext, tx: Queryable, job: ClaimedJob): Promise<void> {
  const merchant = await findMerchant(tx, job.merchant_id);
  if (!merchant || !ctx.mailer) return;
  await ctx.mailer.send(alertMessage(merchant.email, job));
}

async function runPurge(tx: Queryable, job: ClaimedJob, now: Date): Promise<void> {
  const owner = { merchantId: job.merchant_id, livemode: job.livemode };
  const deleted = await purgeEvents(tx, owner, new Date(now.getTime() - EVENT_RETENTION_MS), PURGE_CHUNK);
  let next: Date | undefined;
  if (deleted >= PURGE_CHUNK) next = now;
  else {
    const oldest = await oldestEventTime(tx, owner);
    if (oldest) {
      next = new Date(Math.max(oldest.getTime() + EVENT_RETENTION_MS, now.getTime() + PURGE_MIN_GAP_MS));
    }
  }
  if (!next) return;
  await replaceRunningJob(
    tx,
    job.id,
    newJob(
      {
        kind: 'purge_events',
        merchantId: job.merchant_id,
        livemode: job.livemode,
        subjectId: job.subject_id,
        runAt: next,
      },
      now,
    ),
  );
}

export const WEBHOOK_JOB_KINDS = ['webhook_alert', 'purge_events'] as const;

/** Runs one webhook job inside the worker's batch transaction; `now` is the merchant's time. */
export async function runWebhookJob(
  ctx: ServiceContext,
  tx: Queryable,
  job: ClaimedJob,
  now: Date,
): Promise<void> {
  if (job.kind === 'webhook_alert') await runAlert(ctx, tx, job);
  else if (job.kind === 'purge_events') await runPurge(tx, job, now);
}
