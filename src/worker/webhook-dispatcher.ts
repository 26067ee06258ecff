import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../operations/context.ts';
import {
  claimWebhookSends,
  leaseMs,
  recordWebhookAttempts,
  releaseWebhookClaims,
  type SendJob,
  sendWebhook,
} from '../operations/webhook-delivery.ts';
import type { AttemptOutcome } from '../operations/webhook-health.ts';
import { webhookSettings } from '../operations/webhook-settings.ts';

export interface WebhookDispatcher {
  /** Stops claiming, waits for the requests in flight and records them. */
  stop(): Promise<void>;
}

/** Results are written in batches: at most this many per transaction. */
const RECORD_BATCH = 500;
/** At most this many deliveries claimed by one claim transaction. */
const CLAIM_BATCH = 500;
/** At most this many deliveries held (claimed, sending or waiting to) by one process. */
const MAX_HELD = 2_000;
/**
 * A target's queue is kept short enough to be sent within this long at its measured speed: deep
 * enough that one claim feeds its slots until the next, short enough not to add delay.
 */
const QUEUE_MS = 250;

interface Target {
  /** Requests being sent. */
  sending: number;
  /** Claimed, waiting for a free slot. */
  queue: SendJob[];
  /** Recent request time (ms), a moving average: how deep the queue may be. */
  latencyMs: number | undefined;
}

/**
 * The worker's webhook loop. A claim transaction takes up to CLAIM_BATCH due deliveries (fanning out
 * new events first); each is sent once its target has a free slot: WEBHOOK_CONCURRENCY_PER_ENDPOINT
 * requests at once per endpoint (or callback origin) and WEBHOOK_CONCURRENCY in all, so one slow
 * receiver never holds up another. Claims are a lease: a delivery waiting in a queue must still
 * be sent and recorded before its lease runs out, so a target's queue is only as deep as its
 * measured speed allows: one round of slots for a slow or unknown receiver, for a fast one as
 * many as it takes in QUEUE_MS (up to CLAIM_BATCH). Results are recorded in batches. With nothing to claim the loop waits
 * WEBHOOK_POLL_MS, or less when a target's queue runs low.
 */
export function startWebhookDispatcher(
  ctx: ServiceContext,
  options: { logger: Pick<FastifyBaseLogger, 'error' | 'debug'> },
): WebhookDispatcher {
  const settings = webhookSettings(ctx);
  const lease = leaseMs(ctx);
  const targets = new Map<string, Target>();
  let sending = 0;
  let held = 0;
  let stopped = false;
  const results: AttemptOutcome[] = [];
  let recording: Promise<void> = Promise.resolve();
  let wake: (() => void) | undefined;
  // A wake-up that comes while the loop is busy claiming is kept for its next pause, not lost.
  let woken = false;

  const nudge = () => {
    const w = wake;
    wake = undefined;
    if (w) w();
    else woken = true;
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /**
   * How many deliveries a target may hold: the queued ones must be sent within the lease, with room
   * to spare, at the target's speed. Unknown targets get one round of slots.
   */
  const capOf = (t: Target | undefined): number => {
    const slots = settings.perEndpoint;
    if (!t?.latencyMs) return slots;
    const rounds = Math.floor(Math.min(QUEUE_MS, lease / 2) / Math.max(t.latencyMs, 1));
    return Math.max(slots, Math.min(CLAIM_BATCH, slots * rounds));
  };

  // One writer at a time; results that arrive while it writes go into its next batch.
  let flushing = false;
  const flush = () => {
    if (flushing) return;
    flushing = true;
    recording = (async () => {
      while (results.length > 0) {
        const batch = results.splice(0, RECORD_BATCH);
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

  const pump = (key: string) => {
    const t = targets.get(key);
    if (!t) return;
    while (t.queue.length > 0 && t.sending < settings.perEndpoint && sending < settings.concurrency) {
      const job = t.queue.shift() as SendJob;
      t.sending += 1;
      sending += 1;
      void sendWebhook(ctx, job)
        .then((outcome) => {
          t.latencyMs =
            t.latencyMs === undefined ? outcome.latencyMs : 0.8 * t.latencyMs + 0.2 * outcome.latencyMs;
          results.push(outcome);
          flush();
        })
        .catch((error: unknown) => options.logger.error({ err: error }, 'webhook send failed unexpectedly'))
        .finally(() => {
          t.sending -= 1;
          sending -= 1;
          held -= 1;
          // A global slot freed: other targets may be waiting for one.
          if (sending + 1 >= settings.concurrency) for (const other of targets.keys()) pump(other);
          else pump(key);
          // Claim more once a target's queue runs low, not after every answer.
          if (t.queue.length <= Math.floor(settings.perEndpoint / 2)) nudge();
        });
    }
  };

  /** What the claim may add per target: in SQL terms, "busy" counts against one common cap. */
  const busyCounts = (common: number): Map<string, number> => {
    const busy = new Map<string, number>();
    for (const [key, t] of targets) busy.set(key, t.sending + t.queue.length + (common - capOf(t)));
    return busy;
  };

  const loop = (async () => {
    while (!stopped) {
      const room = Math.min(CLAIM_BATCH, MAX_HELD - held);
      let claimed = 0;
      let fanned = 0;
      if (room > 0) {
        try {
          const common = settings.perEndpoint;
          const { jobs, events } = await claimWebhookSends(ctx, {
            capacity: room,
            inFlight: busyCounts(common),
            perTarget: common,
          });
          fanned = events;
          claimed = jobs.length;
          held += jobs.length;
          const touched = new Set<string>();
          for (const job of jobs) {
            let t = targets.get(job.targetKey);
            if (!t) {
              t = { sending: 0, queue: [], latencyMs: undefined };
              targets.set(job.targetKey, t);
            }
            t.queue.push(job);
            touched.add(job.targetKey);
          }
          for (const key of touched) pump(key);
        } catch (error) {
          options.logger.error({ err: error }, 'webhook claim failed; retrying');
        }
      }
      if (stopped) break;
      if (targets.size > 10_000) {
        for (const [key, t] of targets) if (t.sending === 0 && t.queue.length === 0) targets.delete(key);
      }
      // Busy rounds go straight on; otherwise wait for the poll interval or a nudge.
      if ((claimed === 0 && fanned === 0) || held >= MAX_HELD) await pause(settings.pollMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      nudge();
      await loop;
      // Deliveries still queued are given back at once (rather than left leased until their
      // claims run out); the requests in flight are finished and recorded.
      const queued = [...targets.values()].flatMap((t) => t.queue.splice(0));
      held -= queued.length;
      await releaseWebhookClaims(ctx, queued).catch((error: unknown) =>
        options.logger.error({ err: error }, 'releasing webhook claims failed; they run out on their own'),
      );
      while (held > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      flush();
      await recording;
    },
  };
}
