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
