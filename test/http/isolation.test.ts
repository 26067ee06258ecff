import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

interface Txn {
  service_transaction_id: string;
  merchant_reference: string | null;
  livemode: boolean;
}
interface List {
  object: 'list';
  data: Txn[];
  has_more: boolean;
}

let h: Harness;
/** Two verified merchants, so both environments work for both. */
let a: CreatedMerchant;
let b: CreatedMerchant;
/** One transaction per merchant and environment, all with the same merchant_reference. */
const txn: Record<'aTest' | 'aLive' | 'bTest' | 'bLive', Txn> = {} as never;

const create = async (key: string, payload: Record<string, unknown>): Promise<Txn> => {
  // Ids sort by the service clock's millisecond; step it so creation order is also id order.
  h.clock.advance(1);
  const res = await h.request({ method: 'POST', url: '/v1/transactions', key, payload });
  assert.equal(res.statusCode, 201, res.body);
  return json<Txn>(res);
};
const get = (key: string, id: string) => h.request({ method: 'GET', url: `/v1/transactions/${id}`, key });
const list = async (key: string, query = ''): Promise<List> => {
  const res = await h.request({ method: 'GET', url: `/v1/transactions${query}`, key });
  assert.equal(res.statusCode, 200, res.body);
  return json<List>(res);
};
const ids = (l: List) => l.data.map((t) => t.service_transaction_id).sort();

before(async () => {
  h = await startHarness();
  a = await h.newMerchant({ verified: true, name: 'Merchant A' });
  b = await h.newMerchant({ verified: true, name: 'Merchant B' });
  // The same reference in all four places: references are unique per merchant and environment only.
  const body = { amount: 42, title: 'Shared reference', merchant_reference: 'order-1' };
  txn.aTest = await create(a.test_key, body);
  txn.aLive = await create(a.live_key, body);
  txn.bTest = await create(b.test_key, body);
  txn.bLive = await create(b.live_key, body);
});
after(() => h.close());

describe('isolation between merchants', () => {
  it("answers 404 not_found to merchant B for merchant A's transaction, in either environment", async () => {
    for (const [key, target] of [
      [b.test_key, txn.aTest],
      [b.live_key, txn.aLive],
      [a.test_key, txn.bTest],
      [a.live_key, txn.bLive],
    ] as const) {
      const res = await get(key, target.service_transaction_id);
      const error = assertErrorEnvelope(res, 404, 'not_found', 'not_found');
      assert.match(error.message, new RegExp(target.service_transaction_id));
    }
  });

  it('answers the same 404 for another merchant’s id as for an id that never existed', async () => {
    const foreign = json<{ error: { message: string } }>(
      await get(b.test_key, txn.aTest.service_transaction_id),
    );
    const missing = json<{ error: { message: string } }>(
      await get(b.test_key, 'txn_01AAAAAAAAAAAAAAAAAAAAAAAA'),
    );
    assert.equal(
      foreign.error.message.replace(txn.aTest.service_transaction_id, 'ID'),
      missing.error.message.replace('txn_01AAAAAAAAAAAAAAAAAAAAAAAA', 'ID'),
    );
  });

  it('lets each merchant use the same merchant_reference independently', async () => {
    assert.notEqual(txn.aTest.service_transaction_id, txn.bTest.service_transaction_id);
    assert.equal(txn.aTest.merchant_reference, 'order-1');
    assert.equal(txn.bTest.merchant_reference, 'order-1');
  });

  it("never lists another merchant's transactions, with or without filters", async () => {
    assert.deepEqual(ids(await list(a.test_key)), [txn.aTest.service_transaction_id]);
    assert.deepEqual(ids(await list(b.test_key)), [txn.bTest.service_transaction_id]);
    assert.deepEqual(ids(await list(b.test_key, '?merchant_reference=order-1')), [
      txn.bTest.service_transaction_id,
    ]);
    assert.deepEqual(ids(await list(b.test_key, '?status=pending_payment&limit=100')), [
      txn.bTest.service_transaction_id,
    ]);
  });

  it("does not page into another merchant's transactions through a cursor", async () => {
    // A's newest id as B's cursor: the page after it holds B's own transactions only.
    const newest = await create(a.test_key, { amount: 1, title: 'Newest of A' });
    const after = await list(b.test_key, `?starting_after=${newest.service_transaction_id}`);
    assert.deepEqual(ids(after), [txn.bTest.service_transaction_id]);
    const before = await list(b.test_key, `?ending_before=${txn.aTest.service_transaction_id}`);
    assert.deepEqual(ids(before), [txn.bTest.service_transaction_id]);
  });
});

describe('isolation between test and live', () => {
  it("answers 404 not_found to the test key for the same merchant's live transaction, and vice versa", async () => {
    assertErrorEnvelope(
      await get(a.test_key, txn.aLive.service_transaction_id),
      404,
      'not_found',
      'not_found',
    );
    assertErrorEnvelope(
      await get(a.live_key, txn.aTest.service_transaction_id),
      404,
      'not_found',
      'not_found',
    );
    // ...while each key reads its own.
    const own = await get(a.live_key, txn.aLive.service_transaction_id);
    assert.equal(own.statusCode, 200);
    assert.equal(json<Txn>(own).livemode, true);
    const ownTest = await get(a.test_key, txn.aTest.service_transaction_id);
    assert.equal(json<Txn>(ownTest).livemode, false);
  });

  it('lists only the key’s own environment', async () => {
    const live = await list(a.live_key);
    assert.deepEqual(ids(live), [txn.aLive.service_transaction_id]);
    assert.ok(live.data.every((t) => t.livemode === true));
    const test = await list(a.test_key, '?merchant_reference=order-1');
    assert.deepEqual(ids(test), [txn.aTest.service_transaction_id]);
    assert.ok(test.data.every((t) => t.livemode === false));
  });

  it('keeps idempotency per environment: the same idempotency key in test and live makes two transactions', async () => {
    const body = { amount: 7, title: 'Keyed twice' };
    const headers = { 'idempotency-key': 'isolation-idem-1' };
    const inTest = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: a.test_key,
      payload: body,
      headers,
    });
    const inLive = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: a.live_key,
      payload: body,
      headers,
    });
    assert.equal(inTest.statusCode, 201, inTest.body);
    assert.equal(inLive.statusCode, 201, inLive.body);
    assert.notEqual(json<Txn>(inTest).service_transaction_id, json<Txn>(inLive).service_transaction_id);
    assert.equal(json<Txn>(inLive).livemode, true);
  });

  it('keeps idempotency per merchant: B reusing A’s idempotency key creates B’s own transaction', async () => {
    const headers = { 'idempotency-key': 'isolation-idem-2' };
    const first = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: a.test_key,
      payload: { amount: 7, title: 'A' },
      headers,
    });
    const other = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: b.test_key,
      payload: { amount: 8, title: 'B' },
      headers,
    });
    assert.equal(first.statusCode, 201);
    assert.equal(other.statusCode, 201, `B got A's idempotency record: ${other.body}`);
    assert.equal(json(other).title, 'B');
  });
});
