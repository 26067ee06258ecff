import type { Queryable } from './db.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';
import type { Owner } from './transactions.ts';

export interface WebhookEndpointRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  url: string;
  description: string | null;
  enabled_events: string[];
  status: 'enabled' | 'disabled';
  failing: boolean;
  failing_since: Date | null;
  last_alert_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type NewWebhookEndpoint = Omit<
  WebhookEndpointRow,
  'failing' | 'failing_since' | 'last_alert_at' | 'deleted_at'
>;

export async function insertEndpoint(q: Queryable, e: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
  const { rows } = await q.query<WebhookEndpointRow>(
    `INSERT INTO webhook_endpoints (id, merchant_id, livemode, url, description, enabled_events, status,
        created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [
      e.id,
      e.merchant_id,
      e.livemode,
      e.url,
      e.description,
      e.enabled_events,
      e.status,
      e.created_at,
      e.updated_at,
    ],
  );
  return rows[0] as WebhookEndpointRow;
}

/** Not deleted, of this merchant and environment. */
export async function findEndpoint(
  q: Queryable,
  owner: Owner,
  id: string,
  lock = false,
): Promise<WebhookEndpointRow | undefined> {
  const { rows } = await q.query<WebhookEndpointRow>(
    `SELECT * FROM webhook_endpoints
      WHERE id = $1 AND merchant_id = $2 AND livemode = $3 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
    [id, owner.merchantId, owner.livemode],
  );
  return rows[0];
}

/** Any endpoint by id, deleted or not (the alert job names it). */
export async function findEndpointById(q: Queryable, id: string): Promise<WebhookEndpointRow | undefined> {
  const { rows } = await q.query<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
  return rows[0];
}

export async function countEndpoints(q: Queryable, owner: Owner): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(
    'SELECT count(*) AS n FROM webhook_endpoints WHERE merchant_id = $1 AND livemode = $2 AND deleted_at IS NULL',
    [owner.merchantId, owner.livemode],
  );
  return Number(rows[0]?.n ?? 0n);
}

/** Newest first, with id cursors like every list; one extra row tells has_more. */
export async function listEndpoints(
  q: Queryable,
  owner: Owner,
  filter: PageFilter,
): Promise<Page<WebhookEndpointRow>> {
  const c = conditions(
    ['merchant_id = $1', 'livemode = $2', 'deleted_at IS NULL'],
    [owner.merchantId, owner.livemode],
  );
  const page = keysetPage(c, 'id', filter);
  const { rows } = await q.query<WebhookEndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE ${c.where.join(' AND ')}
      ORDER BY id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}

export interface EndpointChanges {
  url?: string;
  enabled_events?: string[];
  status?: 'enabled' | 'disabled';
  description?: string | null;
}

export async function updateEndpoint(
  q: Queryable,
  id: string,
  changes: EndpointChanges,
  now: Date,
): Promise<WebhookEndpointRow> {
  const { rows } = await q.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET
        url = coalesce($2, url),
        enabled_events = coalesce($3, enabled_events),
        status = coalesce($4, status),
        description = CASE WHEN $5::boolean THEN $6 ELSE description END,
        updated_at = $7
      WHERE id = $1 RETURNING *`,
    [
      id,
      changes.url ?? null,
      changes.enabled_events ?? null,
      changes.status ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      now,
    ],
  );
  return rows[0] as WebhookEndpointRow;
}

export async function markEndpointDeleted(q: Queryable, id: string, now: Date): Promise<void> {
  await q.query('UPDATE webhook_endpoints SET deleted_at = $2, updated_at = $2 WHERE id = $1', [id, now]);
}

/** Enabled endpoints of these merchants (both environments): the fan-out filters them per event. */
export async function enabledEndpointsOf(
  q: Queryable,
  merchantIds: readonly string[],
): Promise<Pick<WebhookEndpointRow, 'id' | 'merchant_id' | 'livemode' | 'url' | 'enabled_events'>[]> {
  if (merchantIds.length === 0) return [];
  const { rows } = await q.query<
    Pick<WebhookEndpointRow, 'id' | 'merchant_id' | 'livemode' | 'url' | 'enabled_events'>
  >(
    `SELECT id, merchant_id, livemode, url, enabled_events FROM webhook_endpoints
      WHERE merchant_id = ANY($1::text[]) AND status = 'enabled' AND deleted_at IS NULL
      ORDER BY id`,
    [merchantIds],
  );
  return rows;
}
