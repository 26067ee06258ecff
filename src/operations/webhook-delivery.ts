import { randomBytes } from 'node:crypto';
import { webhookHeaders } from '../domain/webhook-signature.ts';
import { MAX_ATTEMPTS, nextAttemptAt } from '../domain/webhooks.ts';
import {
  cancelDeliveries,
  claimDueDeliveries,
  type DeliveryFilter,
  loadSendRows,
  type RecordedDelivery,
  recordAttempts,
  releaseClaims,
} from '../store/webhook-deliveries.ts';
import { postWebhook } from '../webhooks/http-sender.ts';
import type { ServiceContext } from './context.ts';
import { eventPayload } from './event-json.ts';
import { fanOutEvents } from './webhook-fanout.ts';
import { type AttemptOutcome, lockTargetsOf, updateTargetHealth } from './webhook-health.ts';
import { openSecret } from './webhook-secret.ts';
import { webhookSettings } from './webhook-settings.ts';

/**
 * Webhook delivery in three steps, never sending from inside a database transaction:
 *   1. claimWebhookSends: one transaction fans out new events and claims due deliveries (a lease
 *      with a token), then commits;
 *   2. sendWebhook: the HTTP POST, signed afresh with the real time of sending;
 *   3. recordWebhookAttempts: one transaction records the attempts under their claim's token,
 *      schedules retries on the merchant's clock, and flags or clears failing targets.
 * A worker that dies between 1 and 3 leaves leases that run out; the deliveries are then sent
 * again, so every event reaches every target at least once.
 */

export interface SendJob {
  deliveryId: string;
  token: string;
  eventId: string;
  merchantId: string;
  livemode: boolean;
  endpointId: string | null;
  targetKey: string;
  /** 1 to 5. */
  number: number;
  url: string;
  /** The hydrated event as sent (link URLs rebuilt). */
  body: string;
  /** Null when the stored secret cannot be opened: the attempt fails without a request. */
  secret: string | null;
  clockOffsetMs: number;
}

export interface ClaimRequest extends DeliveryFilter {
  /** How many sends may start now. */
  capacity: number;
  /** In flight per target key in this process (not changed). */
  inFlight?: ReadonlyMap<string, number>;
  /** Most deliveries held per target, counting inFlight (default WEBHOOK_CONCURRENCY_PER_ENDPOINT). */
  perTarget?: number;
  /** How many new events one claim fans out at most. */
  fanOutLimit?: number;
}

/** How long a claim holds a delivery: enough to send it (the timeout) and record the result. */
export function leaseMs(ctx: Pick<ServiceContext, 'webhooks'>): number {
  return webhookSettings(ctx).timeoutMs * 2 + 5_000;
}

/**
 * The signing secret, or null if it cannot be opened (sealed under another SAFEHOLD_SECRET): one
 * merchant's unreadable secret must not stop everyone's deliveries.
 */
function readableSecret(ctx: ServiceContext, sealed: string | null): string | null {
  if (!sealed) return null;
  try {
    return openSecret(ctx, sealed);
  } catch {
    return null;
  }
}

const UNREADABLE_SECRET =
  'not sent: the signing secret cannot be read (was SAFEHOLD_SECRET changed?); rotate it with POST /v1/webhook_secret/rotate';

/** One transaction: fan out new events, claim due deliveries, load what sending them needs. */
export async function claimWebhookSends(
  ctx: ServiceContext,
  request: ClaimRequest,
): Promise<{ jobs: SendJob[]; events: number }> {
  const perTarget = request.perTarget ?? webhookSettings(ctx).perEndpoint;
  const lease = { token: randomBytes(12).toString('base64url'), ms: leaseMs(ctx) };
  const filter = { merchantId: request.merchantId, livemode: request.livemode };
  return ctx.db.transaction(async (tx) => {
    const inFlight = new Map(request.inFlight ?? []);
    const fanned = await fanOutEvents(
      ctx,
      tx,
      { ...filter, limit: request.fanOutLimit ?? 500 },
      { capacity: request.capacity, perTarget, inFlight, lease },
    );
    const room = request.capacity - fanned.claimed.length;
    const due =
      room > 0
        ? await claimDueDeliveries(tx, ctx.clock.now(), {
            ...filter,
            limit: room,
            perTarget,
            inFlight,
            lease,
          })
        : [];
    const rows = await loadSendRows(tx, [...fanned.claimed, ...due], lease.token);
    const gone = rows.filter((r) => !r.active);
    await cancelDeliveries(
      tx,
      gone.map((r) => r.id),
      ctx.clock.now(),
    );
    const jobs: SendJob[] = [];
    for (const row of rows) {
      if (!row.active) continue;
      jobs.push({
        deliveryId: row.id,
        token: lease.token,
        eventId: row.event_id,
        merchantId: row.merchant_id,
        livemode: row.livemode,
        endpointId: row.endpoint_id,
        targetKey: row.target_key,
        number: row.attempts + 1,
        url: row.url,
        body: JSON.stringify(eventPayload(ctx, row.payload)),
        secret: readableSecret(ctx, row.sealed_secret),
        clockOffsetMs: Number(row.clock_offset_ms),
      });
    }
    return { jobs, events: fanned.events };
  });
}

/**
 * One attempt. X-Service-Timestamp is the real time of sending (Date.now, not the service or test
 * clock): receivers compare it with their own clocks. The attempt's recorded time and its retry
 * schedule are on the merchant's clock, so the test clock drives retries.
 */
export async function sendWebhook(ctx: ServiceContext, job: SendJob): Promise<AttemptOutcome> {
  const attemptedAt = new Date(ctx.clock.now().getTime() + job.clockOffsetMs);
  const timestamp = Math.floor(Date.now() / 1000);
  const result =
    job.secret === null
      ? { ok: false, statusCode: null, latencyMs: 0, excerpt: null, error: UNREADABLE_SECRET }
      : await postWebhook({
          url: job.url,
          headers: webhookHeaders(job.secret, job.eventId, job.body, timestamp),
          body: job.body,
          timeoutMs: webhookSettings(ctx).timeoutMs,
          publicOnly: job.livemode,
        });
  const next = result.ok ? null : nextAttemptAt(job.number, attemptedAt);
  return {
    deliveryId: job.deliveryId,
    eventId: job.eventId,
    merchantId: job.merchantId,
    livemode: job.livemode,
    endpointId: job.endpointId,
    token: job.token,
    number: job.number,
    url: job.url,
    attemptedAt,
    succeeded: result.ok,
    statusCode: result.statusCode,
    latencyMs: result.latencyMs,
    excerpt: result.excerpt,
    error: result.error,
    status: result.ok ? 'succeeded' : next === null || job.number >= MAX_ATTEMPTS ? 'failed' : 'pending',
    nextAttemptAt: result.ok || job.number >= MAX_ATTEMPTS ? null : next,
  };
}

/** Records a batch of attempts in one transaction, with the failing flags and alerts they cause. */
export async function recordWebhookAttempts(
  ctx: ServiceContext,
  records: readonly AttemptOutcome[],
): Promise<RecordedDelivery[]> {
  if (records.length === 0) return [];
  return ctx.db.transaction(async (tx) => {
    // Endpoints before deliveries: the order the API takes them in (disable, delete).
    const locked = await lockTargetsOf(tx, records);
    const recorded = await recordAttempts(tx, records);
    await updateTargetHealth(tx, locked, recorded, records);
    return recorded;
  });
}

/** Gives back claimed deliveries that will not be sent by this worker (it is stopping). */
export async function releaseWebhookClaims(ctx: ServiceContext, jobs: readonly SendJob[]): Promise<void> {
  await releaseClaims(
    ctx.db,
    jobs.map((j) => ({ id: j.deliveryId, token: j.token })),
  );
}
