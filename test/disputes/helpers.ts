import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { type Harness, json } from '../helpers/harness.ts';

export type Json = Record<string, unknown>;

/** A paid test transaction (mobile money), delivered if asked; returns its id and buyer link. */
export async function paidTransaction(
  h: Harness,
  options: { key?: string; deliver?: boolean; amount?: number; currency?: string; body?: Json } = {},
): Promise<{ id: string; buyerLink: string }> {
  const key = options.key ?? h.merchant.test_key;
  const created = await h.request({
    method: 'POST',
    url: '/v1/transactions',
    key,
    payload: {
      amount: options.amount ?? 1000,
      ...(options.currency ? { currency: options.currency } : {}),
      title: 'Phone',
      ...options.body,
    },
  });
  if (created.statusCode !== 201) throw new Error(`create: ${created.statusCode} ${created.body}`);
  const txn = json(created);
  const id = String(txn.service_transaction_id);
  const paid = await h.request({
    method: 'POST',
    url: `/v1/test_helpers/transactions/${id}/pay`,
    key,
    payload: { method: 'mobile_money', phone: '+254700000000' },
  });
  if (json(paid).status !== 'reserved') throw new Error(`pay: ${paid.statusCode} ${paid.body}`);
  if (options.deliver) {
    const res = await h.request({ method: 'POST', url: `/v1/transactions/${id}/deliver`, key });
    if (res.statusCode !== 200) throw new Error(`deliver: ${res.statusCode} ${res.body}`);
  }
  return { id, buyerLink: String(txn.buyer_link) };
}

export function openDispute(
  h: Harness,
  transactionId: string,
  body: Json = {},
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return h.request({
    method: 'POST',
    url: '/v1/disputes',
    key: options.key,
    headers: options.headers,
    payload: {
      service_transaction_id: transactionId,
      reason: 'not_as_described',
      description: 'The phone does not turn on.',
      ...body,
    },
  });
}

/** Opens a dispute and returns it (throws unless 201). */
export async function disputeOn(
  h: Harness,
  transactionId: string,
  body: Json = {},
  key?: string,
): Promise<Json> {
  const res = await openDispute(h, transactionId, body, { key });
  if (res.statusCode !== 201) throw new Error(`open dispute: ${res.statusCode} ${res.body}`);
  return json(res);
}

export async function transaction(h: Harness, id: string, key?: string): Promise<Json> {
  return json(await h.request({ method: 'GET', url: `/v1/transactions/${id}`, key }));
}

export async function advance(h: Harness, seconds: number, key?: string): Promise<Json> {
  const res = await h.request({
    method: 'POST',
    url: '/v1/test_helpers/clock/advance',
    key,
    payload: { seconds },
  });
  if (res.statusCode !== 200) throw new Error(`advance: ${res.statusCode} ${res.body}`);
  return json(res);
}

/** The events of a type about a transaction, oldest first (their payloads). */
export async function eventsOf(h: Harness, transactionId: string, type: string): Promise<Json[]> {
  const { rows } = await h.ctx.db.query<{ payload: Json }>(
    'SELECT payload FROM events WHERE service_transaction_id = $1 AND type = $2 ORDER BY created_at, id',
    [transactionId, type],
  );
  return rows.map((r) => r.payload);
}

export interface FilePart {
  name?: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A multipart/form-data body as a browser sends it. */
export function multipart(
  fields: Record<string, string>,
  files: readonly FilePart[] = [],
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----safehold${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  }
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.name ?? 'file'}"; filename="${f.filename}"\r\n` +
          `Content-Type: ${f.contentType}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
export const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);
export const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
export const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([0x1a, 0, 0, 0]),
  Buffer.from('WEBPVP8 '),
  Buffer.alloc(14),
]);
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
