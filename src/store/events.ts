import type { Queryable } from './db.ts';

export interface NewEvent {
  id: string;
  merchant_id: string;
  livemode: boolean;
  type: string;
  service_transaction_id: string | null;
  payload: unknown;
  created_at: Date;
}

/** Writes one outbox event; call it inside the transaction of the change it reports. */
export async function insertEvent(q: Queryable, e: NewEvent): Promise<void> {
  await q.query(
    `INSERT INTO events (id, merchant_id, livemode, type, service_transaction_id, payload, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      e.id,
      e.merchant_id,
      e.livemode,
      e.type,
      e.service_transaction_id,
      JSON.stringify(e.payload),
      e.created_at,
    ],
  );
}

/**
 * Writes several outbox events in one statement. The rows travel as one JSON document (payloads
 * nested as objects), not as a text array of JSON strings: no array escaping in the driver and no
 * array parsing in the database, the scheduler's largest write (see bench/README.md).
 */
export async function insertEvents(q: Queryable, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await q.query(
    `INSERT INTO events (id, merchant_id, livemode, type, service_transaction_id, payload, created_at)
     SELECT id, merchant_id, livemode, type, service_transaction_id, payload, created_at
       FROM jsonb_to_recordset($1::jsonb) AS e(id text, merchant_id text, livemode boolean, type text,
            service_transaction_id text, payload jsonb, created_at timestamptz)`,
    [JSON.stringify(events)],
  );
}
