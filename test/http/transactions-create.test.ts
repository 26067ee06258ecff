import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hydrateEventPayload } from '../../src/operations/event-payloads.ts';
import { createMerchant } from '../../src/operations/manage-merchants.ts';
import { DB_KIND, type Harness, json, startHarness } from '../helpers/harness.ts';

/** Every field resolutions 4 says the transaction object carries. */
const TRANSACTION_FIELDS = [
  'object',
  'service_transaction_id',
  'merchant_reference',
  'merchant_order_id',
  'status',
  'settlement_status',
  'amount',
  'amount_minor',
  'currency',
  'title',
  'vertical',
  'customer',
  'seller',
  'release_condition',
  'review_deadline',
  'payment_link',
  'buyer_link',
  'payment_method',
  'last_payment_attempt',
  'amount_released',
  'amount_refunded',
  'callback_url',
  'metadata',
  'livemode',
  'created_at',
  'updated_at',
];

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface EventRow {
  id: string;
  type: string;
  merchant_id: string;
  livemode: boolean;
  service_transaction_id: string;
  payload: Record<string, unknown>;
}

describe('POST /v1/transactions', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const create = (payload: Record<string, unknown>, key?: string) =>
    h.request({ method: 'POST', url: '/v1/transactions', payload, key });

  it('creates a pending_payment transaction in the flat shape and answers 201', async () => {
    const res = await create({
      amount: 1500.5,
      title: 'Used phone',
      vertical: 'electronics',
      satisfaction_days: 5,
      seller_email: 's@example.com',
    });
    assert.equal(res.statusCode, 201);
    const t = json(res);
    assert.equal(t.status, 'pending_payment');
    assert.equal(t.settlement_status, 'awaiting_payment');
    assert.equal(t.amount, 1500.5);
    assert.equal(t.amount_minor, 150050);
    assert.equal(t.currency, 'KES');
    assert.deepEqual(t.release_condition, {
      type: 'buyer_confirmation',
      review_window_days: 5,
      release_at: null,
    });
    assert.deepEqual(t.seller, { merchant_id: null, email: 's@example.com', name: null });
    assert.match(String(t.service_transaction_id), /^txn_[0-9A-Z]{26}$/);
    assert.match(String(t.payment_link), /^http:\/\/localhost:3000\/pay\/[A-Za-z0-9_-]{43}$/);
    assert.match(String(res.headers['x-request-id']), /^req_/);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  });

  it('answers with every field resolutions 4 lists, and no others, for a minimal body', async () => {
    h.clock.advance(1);
    const res = await create({ amount: 10, title: 'Book' });
    assert.equal(res.statusCode, 201);
    const t = json(res);
    assert.deepEqual(Object.keys(t).sort(), [...TRANSACTION_FIELDS].sort());
    assert.equal(t.object, 'transaction');
    assert.equal(t.merchant_reference, null);
    assert.equal(t.merchant_order_id, null);
    assert.equal(t.vertical, 'general');
    assert.equal(t.customer, null);
    assert.equal(t.seller, null);
    assert.deepEqual(t.release_condition, {
      type: 'buyer_confirmation',
      review_window_days: 3,
      release_at: null,
    });
    assert.equal(t.review_deadline, null);
    assert.equal(t.payment_method, null);
    assert.equal(t.amount_released, 0);
    assert.equal(t.amount_refunded, 0);
    assert.equal(t.callback_url, null);
    assert.deepEqual(t.metadata, {});
    assert.equal(t.livemode, false);
    assert.match(String(t.created_at), ISO_MS);
    assert.equal(t.created_at, h.clock.now().toISOString());
    assert.equal(t.updated_at, t.created_at);
  });

  it('takes the flat shape of spec 2.1 and maps it to the response fields', async () => {
    const res = await create({
      merchant_reference: 'flat-1',
      merchant_order_id: 'order-77',
      amount: 2499.99,
      currency: 'KES',
      title: 'Sofa, three seats',
      vertical: 'property',
      seller_email: 'seller@example.com',
      satisfaction_days: 7,
      callback_url: 'https://merchant.example.com/hooks',
      metadata: { cart: 'c-1' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const t = json(res);
    assert.equal(t.merchant_reference, 'flat-1');
    assert.equal(t.merchant_order_id, 'order-77');
    assert.equal(t.amount, 2499.99);
    assert.equal(t.amount_minor, 249999);
    assert.equal(t.title, 'Sofa, three seats');
    assert.equal(t.vertical, 'property');
    assert.deepEqual(t.seller, { merchant_id: null, email: 'seller@example.com', name: null });
    assert.equal(t.customer, null);
    assert.deepEqual(t.release_condition, {
      type: 'buyer_confirmation',
      review_window_days: 7,
      release_at: null,
    });
    assert.equal(t.callback_url, 'https://merchant.example.com/hooks');
    assert.deepEqual(t.metadata, { cart: 'c-1' });
  });

  it('takes the nested shape of spec 2.1 with customer, seller, release_condition and callback_url', async () => {
    const releaseAt = new Date(h.clock.now().getTime() + 10 * 86_400_000);
    const res = await create({
      merchant_reference: 'nested-1',
      amount: 75000,
      currency: 'UGX',
      title: 'Bicycle',
      vertical: 'vehicles',
      customer: { name: 'Amina N.', phone: '+256712345678', email: 'amina@example.com' },
      seller: { merchant_id: 'seller-9', email: 'shop@example.com', name: 'Kampala Bikes' },
      release_condition: { type: 'time_based', release_at: releaseAt.toISOString().replace('.000Z', 'Z') },
      callback_url: 'https://merchant.example.com/safehold',
    });
    assert.equal(res.statusCode, 201, res.body);
    const t = json(res);
    assert.equal(t.currency, 'UGX');
    assert.equal(t.amount, 75000);
    assert.equal(t.amount_minor, 75000);
    assert.deepEqual(t.customer, { name: 'Amina N.', phone: '+256712345678', email: 'amina@example.com' });
    assert.deepEqual(t.seller, { merchant_id: 'seller-9', email: 'shop@example.com', name: 'Kampala Bikes' });
    assert.deepEqual(t.release_condition, {
      type: 'time_based',
      review_window_days: 3,
      release_at: releaseAt.toISOString(),
    });
    assert.equal(t.callback_url, 'https://merchant.example.com/safehold');
  });

  it('keeps partial nested objects with nulls for the fields not given', async () => {
    const res = await create({
      amount: 1,
      title: 'x',
      customer: { email: 'b@example.com' },
      seller: { name: 'Shop' },
      release_condition: { type: 'delivery_confirmation', review_window_days: 14 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const t = json(res);
    assert.deepEqual(t.customer, { name: null, phone: null, email: 'b@example.com' });
    assert.deepEqual(t.seller, { merchant_id: null, email: null, name: 'Shop' });
    assert.deepEqual(t.release_condition, {
      type: 'delivery_confirmation',
      review_window_days: 14,
      release_at: null,
    });
  });

  it("defaults currency to the merchant's own default currency", async () => {
    const ugx = await createMerchant(h.ctx, {
      name: 'Kampala shop',
      email: 'k@example.com',
      defaultCurrency: 'UGX',
    });
    const res = await create({ amount: 5000, title: 'Chair' }, ugx.test_key);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).currency, 'UGX');
    assert.equal(json(res).amount_minor, 5000);
    const decimals = await create({ amount: 5000.5, title: 'Chair' }, ugx.test_key);
    assert.equal(decimals.statusCode, 400);
    assert.equal(json<{ error: { param: string } }>(decimals).error.param, 'amount');
  });

  it('answers GET /v1/transactions/:id with exactly what create answered', async () => {
    const created = json(await create({ amount: 12.3, title: 'Lamp', customer: { phone: '+254700000001' } }));
    const res = await h.request({ method: 'GET', url: `/v1/transactions/${created.service_transaction_id}` });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(json(res), created);
  });

  it('writes one transaction.created event carrying the transaction, in the same database transaction', async () => {
    const res = await create({
      amount: 99.5,
      title: 'Kettle',
      merchant_reference: 'evt-1',
      merchant_order_id: 'o-1',
    });
    assert.equal(res.statusCode, 201);
    const t = json(res);
    const id = String(t.service_transaction_id);
    const { rows: events } = await h.ctx.db.query<EventRow>(
      'SELECT id, type, merchant_id, livemode, service_transaction_id, payload FROM events WHERE service_transaction_id = $1',
      [id],
    );
    assert.equal(events.length, 1);
    const [event] = events;
    assert.ok(event);
    assert.equal(event.type, 'transaction.created');
    assert.equal(event.merchant_id, h.merchant.merchant_id);
    assert.equal(event.livemode, false);
    assert.match(event.id, /^evt_/);
    assert.equal(event.payload.event_id, event.id);
    assert.equal(event.payload.event_type, 'transaction.created');
    assert.equal(event.payload.service_transaction_id, id);
    assert.equal(event.payload.merchant_reference, 'evt-1');
    assert.equal(event.payload.merchant_order_id, 'o-1');
    assert.equal(event.payload.occurred_at, t.created_at);
    // Stored without link URLs (tokens are kept only as hashes); rebuilt as delivered, it is the response.
    assert.equal(
      JSON.stringify(event.payload).includes(String(String(t.payment_link).split('/pay/')[1])),
      false,
    );
    assert.deepEqual(hydrateEventPayload(h.ctx, event.payload).data, t);

    // One database transaction wrote the transaction, its event and its payment link: same xmin.
    const xmin = async (sql: string) => (await h.ctx.db.query<{ x: string }>(sql, [id])).rows.map((r) => r.x);
    const txnXmin = await xmin('SELECT xmin::text AS x FROM transactions WHERE id = $1');
    const eventXmin = await xmin('SELECT xmin::text AS x FROM events WHERE service_transaction_id = $1');
    const linkXmin = await xmin('SELECT xmin::text AS x FROM payment_links WHERE transaction_id = $1');
    assert.equal(txnXmin.length, 1);
    assert.deepEqual(eventXmin, txnXmin);
    assert.deepEqual(linkXmin, txnXmin);
    // And a different create is a different database transaction, so the check above means something.
    const other = json(await create({ amount: 1, title: 'Other' }));
    const otherXmin = (
      await h.ctx.db.query<{ x: string }>('SELECT xmin::text AS x FROM transactions WHERE id = $1', [
        other.service_transaction_id,
      ])
    ).rows[0]?.x;
    assert.notEqual(otherXmin, txnXmin[0], `xmin must differ between creates on ${DB_KIND}`);
  });

  it('stores only the sha256 of the payment link token, and the URL carries no amount, title or customer data', async () => {
    const body = {
      amount: 4321.5,
      title: 'Secret gift',
      merchant_reference: 'ref-pii-check',
      customer: { name: 'Zawadi', phone: '+254711223344', email: 'zawadi@example.com' },
    };
    const t = json(await create(body));
    const url = String(t.payment_link);
    const match = /^http:\/\/localhost:3000\/pay\/([A-Za-z0-9_-]+)$/.exec(url);
    assert.ok(match?.[1], url);
    const token = match[1];
    assert.ok(Buffer.from(token, 'base64url').length >= 16, 'token of at least 128 bits');
    const { rows } = await h.ctx.db.query<{
      token_hash: string;
      merchant_id: string;
      livemode: boolean;
      expires_at: Date;
    }>('SELECT token_hash, merchant_id, livemode, expires_at FROM payment_links WHERE transaction_id = $1', [
      t.service_transaction_id,
    ]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.token_hash, createHash('sha256').update(token).digest('hex'));
    assert.equal(rows[0]?.merchant_id, h.merchant.merchant_id);
    assert.ok(
      (rows[0]?.expires_at.getTime() ?? 0) > h.clock.now().getTime(),
      'the link expires in the future',
    );
    const { rows: raw } = await h.ctx.db.query(
      'SELECT * FROM payment_links WHERE token_hash LIKE $1 OR id = $2',
      [`%${token}%`, token],
    );
    assert.equal(raw.length, 0, 'the token itself is not stored');
    const decoded = decodeURIComponent(url).toLowerCase();
    for (const secret of [
      '4321',
      'secret',
      'gift',
      'zawadi',
      '254711223344',
      'ref-pii-check',
      String(t.service_transaction_id).toLowerCase(),
    ]) {
      assert.ok(!decoded.includes(secret), `payment link must not contain ${secret}`);
    }
    // Two transactions never share a link.
    const again = json(await create({ ...body, merchant_reference: 'ref-pii-check-2' }));
    assert.notEqual(again.payment_link, t.payment_link);
  });

  it('replays the same merchant_reference and body with 200 and Idempotent-Replayed', async () => {
    const body = { amount: 10, title: 'Book', merchant_reference: 'ref-replay' };
    const first = await create(body);
    const second = await create(body);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(json(second).service_transaction_id, json(first).service_transaction_id);
  });

  it('creates live-mode transactions with livemode true for a verified merchant', async () => {
    const verified = await h.newMerchant({ verified: true });
    const res = await create({ amount: 10, title: 'Live book' }, verified.live_key);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).livemode, true);
    const { rows } = await h.ctx.db.query<{ livemode: boolean }>(
      'SELECT livemode FROM events WHERE service_transaction_id = $1',
      [json(res).service_transaction_id],
    );
    assert.deepEqual(rows, [{ livemode: true }]);
  });
});
