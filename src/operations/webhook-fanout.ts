import { newId } from '../domain/ids.ts';
import { newSigningSecret } from '../domain/webhook-signature.ts';
import { deliveryTargets, type EndpointTarget, EVENT_RETENTION_MS } from '../domain/webhooks.ts';
import type { Queryable } from '../store/db.ts';
import { type NewJob, newJob } from '../store/jobs.ts';
import {
  type DeliveryFilter,
  insertDeliveries,
  type Lease,
  lockEventsToFanOut,
  markFannedOut,
  type NewDelivery,
} from '../store/webhook-deliveries.ts';
import { enabledEndpointsOf } from '../store/webhook-endpoints.ts';
import { scheduleJobsIfAbsent } from '../store/webhook-jobs.ts';
import { insertSecretsIfMissing } from '../store/webhook-secrets.ts';
import type { ServiceContext } from './context.ts';
import { sealSecret } from './webhook-secret.ts';

/** Room for sending right away: the fan-out claims new deliveries up to it. */
export interface SendRoom {
  /** How many more requests may start now. */
  capacity: number;
  perTarget: number;
  /** In flight per target key; updated with what this fan-out claims. */
  inFlight: Map<string, number>;
  lease: Lease;
}

const ownerKey = (merchantId: string, livemode: boolean) => `${merchantId}:${livemode}`;

/** The purge job of a merchant and environment (one per owner; see purge-events.ts). */
export function purgeJobSubject(merchantId: string, livemode: boolean): string {
  return `events:${merchantId}:${livemode ? 'live' : 'test'}`;
}

/**
 * Fans out events not yet fanned out, in the caller's database transaction: one delivery per target
 * (the transaction's callback_url, each enabled endpoint that wants the type), due at once. New
 * deliveries are claimed for this worker while `room` allows, so they are sent right after the
 * commit without another round trip. Also makes sure each owner has a signing secret and a purge
 * job. Returns the ids claimed and how many events were fanned out.
 */
export async function fanOutEvents(
  ctx: Pick<ServiceContext, 'clock' | 'linkSecret'>,
  tx: Queryable,
  filter: DeliveryFilter & { limit: number },
  room: SendRoom,
): Promise<{ claimed: string[]; events: number }> {
  const events = await lockEventsToFanOut(tx, filter);
  if (events.length === 0) return { claimed: [], events: 0 };
  const endpoints = await enabledEndpointsOf(tx, [...new Set(events.map((e) => e.merchant_id))]);
  const byOwner = new Map<string, EndpointTarget[]>();
  for (const endpoint of endpoints) {
    const key = ownerKey(endpoint.merchant_id, endpoint.livemode);
    byOwner.set(key, [...(byOwner.get(key) ?? []), endpoint]);
  }

  const deliveries: NewDelivery[] = [];
  const claimed: string[] = [];
  const owners = new Map<
    string,
    { merchantId: string; livemode: boolean; oldest: Date; delivers: boolean }
  >();
  for (const event of events) {
    const key = ownerKey(event.merchant_id, event.livemode);
    const targets = deliveryTargets(event.type, event.callback_url, byOwner.get(key) ?? []);
    const owner = owners.get(key);
    if (!owner) {
      owners.set(key, {
        merchantId: event.merchant_id,
        livemode: event.livemode,
        oldest: event.created_at,
        delivers: targets.length > 0,
      });
    } else if (targets.length > 0) owner.delivers = true;
    for (const target of targets) {
      const busy = room.inFlight.get(target.targetKey) ?? 0;
      const claim = claimed.length < room.capacity && busy < room.perTarget;
      const id = newId('webhookDelivery', event.created_at.getTime());
      if (claim) {
        room.inFlight.set(target.targetKey, busy + 1);
        claimed.push(id);
      }
      deliveries.push({
        id,
        event_id: event.id,
        merchant_id: event.merchant_id,
        livemode: event.livemode,
        endpoint_id: target.endpointId,
        url: target.url,
        target_key: target.targetKey,
        next_attempt_at: event.created_at,
        created_at: event.created_at,
        claimed: claim,
      });
    }
  }

  const now = ctx.clock.now();
  const delivering = [...owners.values()].filter((o) => o.delivers);
  await insertSecretsIfMissing(
    tx,
    delivering.map((o) => ({
      merchant_id: o.merchantId,
      livemode: o.livemode,
      sealed_secret: sealSecret(ctx, newSigningSecret()),
      created_at: now,
    })),
  );
  await insertDeliveries(tx, deliveries, room.lease);
  const purges: NewJob[] = [...owners.values()].map((o) =>
    newJob(
      {
        kind: 'purge_events',
        merchantId: o.merchantId,
        livemode: o.livemode,
        subjectId: purgeJobSubject(o.merchantId, o.livemode),
        runAt: new Date(o.oldest.getTime() + EVENT_RETENTION_MS),
      },
      now,
    ),
  );
  await scheduleJobsIfAbsent(tx, purges);
  await markFannedOut(
    tx,
    events.map((e) => e.id),
  );
  return { claimed, events: events.length };
}
