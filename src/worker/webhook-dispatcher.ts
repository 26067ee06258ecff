import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../operations/context.ts';
import { claimWebhookSends, recordWebhookAttempts, sendWebhook } from '../operations/webhook-delivery.ts';
import type { AttemptOutcome } from '../operations/webhook-health.ts';
import { webhookSettings } from '../operations/webhook-settings.ts';

export interface WebhookDispatcher {
  /** Stops claiming, waits for the requests in flight and records them. */
  stop(): Promise<void>;
}

/** Results are written in batches: at most this many per transaction. */
const RECORD_BATCH = 500;

/**
 * The worker's webhook loop. Claims work whenever there is room (WEBHOOK_CONCURRENCY requests in
 * flight at most, WEBHOOK_CONCURRENCY_PER_ENDPOINT to one endpoint or callback origin), sends each
 * claimed delivery as soon as the claim has committed, and records results in batches. When there
 * is nothing to claim it waits WEBHOOK_POLL_MS, or less if a request finishes and frees a slot.
 */
export function startWebhookDispatcher(
  ctx: ServiceContext,
  options: { logger: Pick<FastifyBaseLogger, 'error' | 'debug'> },
): WebhookDispatcher {
  const settings = webhookSettings(ctx);
  const inFlight = new Map<string, number>();
  let running = 0;
  let stopped = false;
  const pending: AttemptOutcome[] = [];
  let recording: Promise<void> = Promise.resolve();
  let wake: (() => void) | undefined;

  const nudge = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  // One writer at a time; results that arrive while it writes go into its next batch.
  let flushing = false;
  const flush = () => {
    if (flushing) return;
    flushing = true;
    recording = (async () => {
      while (pending.length > 0) {
        const batch = pending.splice(0, RECORD_BATCH);
        try {
          await recordWebhookAttempts(ctx, batch);
        } catch (error) {
          // Not recorded: the leases run out and the deliveries are sent again (at least once).
          options.logger.error({ err: error, attempts: batch.length }, 'recording webhook attempts failed');
        }
      }
      flushing = false;
    })();
  };

  const launch = (job: Awaited<ReturnType<typeof claimWebhookSends>>['jobs'][number]) => {
    running += 1;
    void sendWebhook(ctx, job)
      .then((outcome) => {
        pending.push(outcome);
        flush();
      })
      .catch((error: unknown) => options.logger.error({ err: error }, 'webhook send failed unexpectedly'))
      .finally(() => {
        running -= 1;
        const left = (inFlight.get(job.targetKey) ?? 1) - 1;
        if (left > 0) inFlight.set(job.targetKey, left);
        else inFlight.delete(job.targetKey);
        // Claim again when half a target's slots (or half of all) have freed up, not on every
        // answer: one claim then fills many slots.
        if (left === Math.floor(settings.perEndpoint / 2) || running === Math.floor(settings.concurrency / 2))
          nudge();
      });
  };

  const loop = (async () => {
    while (!stopped) {
      const room = settings.concurrency - running;
      let claimed = 0;
      let fanned = 0;
      if (room > 0) {
        try {
          const { jobs, events } = await claimWebhookSends(ctx, { capacity: room, inFlight });
          fanned = events;
          claimed = jobs.length;
          for (const job of jobs) {
            inFlight.set(job.targetKey, (inFlight.get(job.targetKey) ?? 0) + 1);
            launch(job);
          }
        } catch (error) {
          options.logger.error({ err: error }, 'webhook claim failed; retrying');
        }
      }
      if (stopped) break;
      // More may be waiting right away when this round was busy; otherwise sleep until the poll.
      if ((claimed === 0 && fanned === 0) || running >= settings.concurrency) await pause(settings.pollMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      nudge();
      await loop;
      while (running > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      flush();
      await recording;
    },
  };
}
