import { idTimeFloor } from '../domain/ids.ts';
import type { Queryable } from './db.ts';
import { conditions, keysetPage, type Page, type PageFilter } from './paging.ts';
import type { Owner } from './transactions.ts';

/** Reading and purging the outbox (writing it is store/events.ts). */
export interface EventRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  type: string;
  service_transaction_id: string | null;
  payload: Record<string, unknown>;
  created_at: Date;
}

export async function findEvent(q: Queryable, owner: Owner, id: string): Promise<EventRow | undefined> {
  const { rows } = await q.query<EventRow>(
    'SELECT * FROM events WHERE id = $1 AND merchant_id = $2 AND livemode = $3',
    [id, owner.merchantId, owner.livemode],
  );
  return rows[0];
}

export interface EventListFilter extends PageFilter {
  type?: string;
  serviceTransactionId?: string;
  /** Only events whose latest delivery to some target failed. */
  deliveryFailed?: boolean;
}

/** Newest first; cursors are ids, which sort by creation. One extra row tells has_more. */
export async function listEvents(
  q: Queryable,
  owner: Owner,
  filter: EventListFilter,
): Promise<Page<EventRow>> {
  const c = conditions(['e.merchant_id = $1', 'e.livemode = $2'], [owner.merchantId, owner.livemode]);
  if (filter.type !== undefined) c.add('e.type = ?', filter.type);
  if (filter.serviceTransactionId !== undefined)
    c.add('e.service_transaction_id = ?', filter.serviceTransactionId);
  if (filter.deliveryFailed === true) {
    c.where.push(`e.id IN (SELECT d.event_id FROM webhook_deliveries d
                          WHERE d.merchant_id = $1 AND d.livemode = $2 AND d.status = 'failed'
                            AND d.superseded_by IS NULL)`);
  } else if (filter.deliveryFailed === false) {
    c.where.push(`NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                             WHERE d.event_id = e.id AND d.status = 'failed' AND d.superseded_by IS NULL)`);
  }
  const page = keysetPage(c, 'e.id', filter);
  const { rows } = await q.query<EventRow>(
    `SELECT e.* FROM events e WHERE ${c.where.join(' AND ')}
      ORDER BY e.id ${page.order} LIMIT ${page.limit}`,
    c.params,
  );
  return page.page(rows);
}

/**
 * Deletes up to `limit` events of one merchant and environment made before `before` (their
 * deliveries and attempts go with them). Ids sort by creation time, so the range is on the id
 * index; created_at is checked too. Returns how many were deleted.
 */
export async function purgeEvents(q: Queryable, owner: Owner, before: Date, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM events WHERE id IN (
       SELECT id FROM events
        WHERE merchant_id = $1 AND livemode = $2 AND id < $3 AND created_at < $4
        ORDER BY id LIMIT $5)`,
    [owner.merchantId, owner.livemode, idTimeFloor('event', before.getTime()), before, limit],
  );
  return rowCount;
}

/** When the oldest event left of a merchant and environment was made. */
export async function oldestEventTime(q: Queryable, owner: Owner): Promise<Date | undefined> {
  const { rows } = await q.query<{ created_at: Date }>(
    `SELECT created_at FROM events WHERE merchant_id = $1 AND livemode = $2 ORDER BY id LIMIT 1`,
    [owner.merchantId, owner.livemode],
  );
  return rows[0]?.created_at;
}
