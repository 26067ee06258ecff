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

/** Writes several outbox events in one statement. */
export async function insertEvents(q: Queryable, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await q.query(
    `INSERT INTO events (id, merchant_id, livemode, type, service_transaction_id, payload, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::jsonb[], $7::timestamptz[])`,
    [
      events.map((e) => e.id),
      events.map((e) => e.merchant_id),
      events.map((e) => e.livemode),
      events.map((e) => e.type),
      events.map((e) => e.service_transaction_id),
      events.map((e) => JSON.stringify(e.payload)),
      events.map((e) => e.created_at),
    ],
  );
}
