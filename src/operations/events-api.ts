import { requestFingerprint } from '../domain/canonical-json.ts';
import { notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { deliveryTargets } from '../domain/webhooks.ts';
import type { EventView, ListEventsFilter } from '../schemas/events.ts';
import type { Queryable } from '../store/db.ts';
import { type EventRow, findEvent, listEvents } from '../store/event-reads.ts';
import {
  type AttemptRow,
  attemptsOfDeliveries,
  type DeliveryRow,
  deliveriesOfEvents,
  findPendingDelivery,
  insertDeliveries,
  makeDueNow,
  markFannedOut,
  supersedeFinished,
} from '../store/webhook-deliveries.ts';
import { enabledEndpointsOf } from '../store/webhook-endpoints.ts';
import type { ServiceContext } from './context.ts';
import { eventPayload } from './event-json.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { type ListView, listView, pageFilterOf } from './list-view.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { ensureWebhookSecret } from './webhook-secret.ts';

/** The events API (resolutions 9): list, read with delivery attempts, redeliver. */

type DeliveryView = EventView['deliveries'][number];

function attemptView(a: AttemptRow): NonNullable<DeliveryView['attempts']>[number] {
  return {
    number: a.number,
    url: a.url,
    attempted_at: a.attempted_at.toISOString(),
    succeeded: a.succeeded,
    status_code: a.status_code,
    latency_ms: a.latency_ms,
    response_excerpt: a.response_excerpt,
    error: a.error,
  };
}

function deliveryView(d: DeliveryRow, attempts?: AttemptRow[]): DeliveryView {
  return {
    object: 'webhook_delivery',
    id: d.id,
    target: d.endpoint_id ? 'webhook_endpoint' : 'callback_url',
    webhook_endpoint: d.endpoint_id,
    url: d.url,
    status: d.status,
    attempts_made: d.attempts,
    next_attempt_at: d.next_attempt_at?.toISOString() ?? null,
    superseded_by: d.superseded_by,
    created_at: d.created_at.toISOString(),
    ...(attempts ? { attempts: attempts.map(attemptView) } : {}),
  };
}

/** An event as the API shows it: the payload exactly as delivered (links rebuilt), and its deliveries. */
export function eventView(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  row: EventRow,
  deliveries: DeliveryRow[],
  attempts?: Map<string, AttemptRow[]>,
): EventView {
  return {
    object: 'event',
    id: row.id,
    type: row.type,
    service_transaction_id: row.service_transaction_id,
    livemode: row.livemode,
    created_at: row.created_at.toISOString(),
    payload: eventPayload(ctx, row.payload) as EventView['payload'],
    delivery_failed: deliveries.some((d) => d.status === 'failed' && d.superseded_by === null),
    deliveries: deliveries.map((d) => deliveryView(d, attempts ? (attempts.get(d.id) ?? []) : undefined)),
  };
}

async function viewWithAttempts(ctx: ServiceContext, q: Queryable, row: EventRow): Promise<EventView> {
  const deliveries = await deliveriesOfEvents(q, [row.id]);
  const attempts = new Map<string, AttemptRow[]>();
  for (const a of await attemptsOfDeliveries(
    q,
    deliveries.map((d) => d.id),
  )) {
    attempts.set(a.delivery_id, [...(attempts.get(a.delivery_id) ?? []), a]);
  }
  return eventView(ctx, row, deliveries, attempts);
}

export async function listEventViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  filter: ListEventsFilter,
): Promise<ListView<EventView>> {
  const { rows, hasMore } = await listEvents(ctx.db, ownerOf(merchant), {
    ...pageFilterOf(filter),
    type: filter.type,
    serviceTransactionId: filter.service_transaction_id,
    deliveryFailed: filter.delivery_failed,
  });
  const deliveries = await deliveriesOfEvents(
    ctx.db,
    rows.map((r) => r.id),
  );
  const byEvent = new Map<string, DeliveryRow[]>();
  for (const d of deliveries) byEvent.set(d.event_id, [...(byEvent.get(d.event_id) ?? []), d]);
  return listView(
    rows.map((row) => eventView(ctx, row, byEvent.get(row.id) ?? [])),
    hasMore,
  );
}

export async function getEventView(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<EventView> {
  const row = await findEvent(ctx.db, ownerOf(merchant), id);
  if (!row) throw notFound('event', id);
  return viewWithAttempts(ctx, ctx.db, row);
}

/**
 * POST /v1/events/{id}/redeliver: sends the event again, now, to each of its current targets (the
 * transaction's callback_url, the enabled endpoints that want its type), with a fresh set of five
 * attempts. A target already waiting for a retry is simply made due now, so repeating the call
 * (with or without an idempotency key) never queues the event twice.
 */
export async function redeliverEvent(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  input: { idempotency_key?: string },
  headerKey: string | undefined,
): Promise<{ event: EventView; replayed: boolean }> {
  const owner = ownerOf(merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const now = merchantNow(ctx, merchant);
  return ctx.db.transaction(async (tx) => {
    const outcome = await runIdempotent(
      tx,
      {
        owner,
        key,
        operation: `POST /v1/events/${id}/redeliver`,
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        const event = await findEvent(tx, owner, id);
        if (!event) throw notFound('event', id);
        // A brand-new event is taken off the fan-out queue first (waiting for a worker that is
        // fanning it out), so the two never both deliver it.
        await markFannedOut(tx, [event.id]);
        const endpoints = (await enabledEndpointsOf(tx, [owner.merchantId])).filter(
          (e) => e.livemode === owner.livemode,
        );
        const { rows } = await tx.query<{ callback_url: string | null }>(
          'SELECT callback_url FROM transactions WHERE id = $1',
          [event.service_transaction_id],
        );
        const targets = deliveryTargets(event.type, rows[0]?.callback_url ?? null, endpoints);
        for (const target of targets) {
          const waiting = await findPendingDelivery(tx, event.id, target.endpointId);
          if (waiting) {
            await makeDueNow(tx, waiting.id, now);
            continue;
          }
          const deliveryId = newId('webhookDelivery', now.getTime());
          await insertDeliveries(
            tx,
            [
              {
                id: deliveryId,
                event_id: event.id,
                merchant_id: owner.merchantId,
                livemode: owner.livemode,
                endpoint_id: target.endpointId,
                url: target.url,
                target_key: target.targetKey,
                next_attempt_at: now,
                created_at: now,
                claimed: false,
              },
            ],
            { token: '', ms: 0 },
          );
          await supersedeFinished(tx, event.id, target.endpointId, deliveryId);
        }
        if (targets.length > 0) await ensureWebhookSecret(ctx, tx, owner, now);
        return { status: 200, resourceType: 'event', resourceId: event.id };
      },
    );
    const row = await findEvent(tx, owner, outcome.resourceId);
    if (!row) throw notFound('event', id);
    return { event: await viewWithAttempts(ctx, tx, row), replayed: outcome.replayed };
  });
}
