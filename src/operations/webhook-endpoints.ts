import { requestFingerprint } from '../domain/canonical-json.ts';
import { invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsFilter,
  UpdateWebhookEndpointInput,
  WebhookEndpointView,
} from '../schemas/webhooks.ts';
import type { Queryable } from '../store/db.ts';
import { cancelPendingToEndpoint } from '../store/webhook-deliveries.ts';
import {
  countEndpoints,
  type EndpointChanges,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  markEndpointDeleted,
  updateEndpoint,
  type WebhookEndpointRow,
} from '../store/webhook-endpoints.ts';
import type { ServiceContext } from './context.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { type ListView, listView, pageFilterOf } from './list-view.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { ensureWebhookSecret } from './webhook-secret.ts';
import { checkWebhookUrl } from './webhook-url.ts';

/** At most this many endpoints per merchant and environment. */
export const MAX_ENDPOINTS = 20;

export function endpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    status: row.status,
    failing: row.failing,
    failing_since: row.failing_since?.toISOString() ?? null,
    last_alert_at: row.last_alert_at?.toISOString() ?? null,
    livemode: row.livemode,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** '*' stands alone: a list with '*' and named types is ambiguous. */
function enabledEvents(list: readonly string[] | undefined): string[] {
  if (list === undefined) return ['*'];
  if (list.includes('*') && list.length > 1) {
    throw invalid('enabled_events', "enabled_events is either ['*'] or a list of event types, not both.");
  }
  return [...list];
}

async function lockedEndpoint(tx: Queryable, merchant: MerchantPrincipal, id: string) {
  const row = await findEndpoint(tx, ownerOf(merchant), id, true);
  if (!row) throw notFound('webhook endpoint', id);
  return row;
}

/** POST /v1/webhook_endpoints: 201 with the endpoint and the environment's signing secret. */
export async function createWebhookEndpoint(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: CreateWebhookEndpointInput,
  headerKey: string | undefined,
): Promise<{ endpoint: WebhookEndpointView & { secret: string }; replayed: boolean }> {
  const owner = ownerOf(merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const events = enabledEvents(input.enabled_events);
  await checkWebhookUrl(input.url, merchant.livemode);
  const now = merchantNow(ctx, merchant);
  return ctx.db.transaction(async (tx) => {
    const outcome = await runIdempotent(
      tx,
      {
        owner,
        key,
        operation: 'POST /v1/webhook_endpoints',
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        if ((await countEndpoints(tx, owner)) >= MAX_ENDPOINTS) {
          throw invalid(
            'url',
            `At most ${MAX_ENDPOINTS} webhook endpoints per environment; delete one first.`,
          );
        }
        const row = await insertEndpoint(tx, {
          id: newId('webhookEndpoint', now.getTime()),
          merchant_id: owner.merchantId,
          livemode: owner.livemode,
          url: input.url,
          description: input.description ?? null,
          enabled_events: events,
          status: 'enabled',
          created_at: now,
          updated_at: now,
        });
        return { status: 201, resourceType: 'webhook_endpoint', resourceId: row.id };
      },
    );
    const row = await findEndpoint(tx, owner, outcome.resourceId);
    if (!row) throw notFound('webhook endpoint', outcome.resourceId);
    const secret = await ensureWebhookSecret(ctx, tx, owner, now);
    return { endpoint: { ...endpointView(row), secret }, replayed: outcome.replayed };
  });
}

export async function getWebhookEndpoint(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<WebhookEndpointView> {
  const row = await findEndpoint(ctx.db, ownerOf(merchant), id);
  if (!row) throw notFound('webhook endpoint', id);
  return endpointView(row);
}

export async function listWebhookEndpoints(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  filter: ListWebhookEndpointsFilter,
): Promise<ListView<WebhookEndpointView>> {
  const { rows, hasMore } = await listEndpoints(ctx.db, ownerOf(merchant), pageFilterOf(filter));
  return listView(rows.map(endpointView), hasMore);
}

/**
 * POST /v1/webhook_endpoints/{id}: change the URL, the event types, the description, or disable
 * (disabled: true) and enable it again. Disabling cancels its pending deliveries.
 */
export async function updateWebhookEndpoint(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  input: UpdateWebhookEndpointInput,
  headerKey: string | undefined,
): Promise<{ endpoint: WebhookEndpointView; replayed: boolean }> {
  const owner = ownerOf(merchant);
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  if (input.url !== undefined) await checkWebhookUrl(input.url, merchant.livemode);
  const changes: EndpointChanges = {
    url: input.url,
    enabled_events: input.enabled_events === undefined ? undefined : enabledEvents(input.enabled_events),
    status: input.disabled === undefined ? undefined : input.disabled ? 'disabled' : 'enabled',
    description: input.description,
  };
  const now = merchantNow(ctx, merchant);
  return ctx.db.transaction(async (tx) => {
    const outcome = await runIdempotent(
      tx,
      {
        owner,
        key,
        operation: `POST /v1/webhook_endpoints/${id}`,
        fingerprint: requestFingerprint(input),
        now,
      },
      async () => {
        await lockedEndpoint(tx, merchant, id);
        await updateEndpoint(tx, id, changes, now);
        if (changes.status === 'disabled') await cancelPendingToEndpoint(tx, id, now);
        return { status: 200, resourceType: 'webhook_endpoint', resourceId: id };
      },
    );
    const row = await findEndpoint(tx, owner, id);
    if (!row) throw notFound('webhook endpoint', id);
    return { endpoint: endpointView(row), replayed: outcome.replayed };
  });
}

/** DELETE /v1/webhook_endpoints/{id}: no more deliveries; pending ones are cancelled. */
export async function deleteWebhookEndpoint(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<{ object: 'webhook_endpoint'; id: string; deleted: true }> {
  const now = merchantNow(ctx, merchant);
  await ctx.db.transaction(async (tx) => {
    await lockedEndpoint(tx, merchant, id);
    await markEndpointDeleted(tx, id, now);
    await cancelPendingToEndpoint(tx, id, now);
  });
  return { object: 'webhook_endpoint', id, deleted: true };
}
