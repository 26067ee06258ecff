import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

interface Txn {
  service_transaction_id: string;
  merchant_reference: string | null;
  merchant_order_id: string | null;
  status: string;
  created_at: string;
  livemode: boolean;
}

interface ListBody {
  object: string;
  data: Txn[];
  has_more: boolean;
}

interface ErrorBody {
  error: { code: string; message: string; param?: string };
}

const COUNT = 25;

describe('GET /v1/transactions and /v1/transactions/:id', () => {
  let h: Harness;
  let m: CreatedMerchant;
  /** The merchant's transactions, newest first, each created one minute after the previous one. */
  let all: Txn[];

  const get = (url: string, key = m.test_key) => h.request({ method: 'GET', url, key });
  const list = async (query: string, key = m.test_key): Promise<ListBody> => {
    const res = await get(`/v1/transactions${query ? `?${query}` : ''}`, key);
    assert.equal(res.statusCode, 200, res.body);
    return json<ListBody>(res);
  };
  const ids = (txns: Txn[]) => txns.map((t) => t.service_transaction_id);

  function assertInvalid(res: LightMyRequestResponse, param: string, message: RegExp): void {
    assert.equal(res.statusCode, 400, res.body);
    const { error } = json<ErrorBody>(res);
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.param, param);
    assert.match(error.message, message);
  }

  before(async () => {
    h = await startHarness();
    m = await h.newMerchant({ verified: true });
    const created: Txn[] = [];
    for (let i = 0; i < COUNT; i++) {
      h.clock.advance(60);
      const res = await h.request({
        method: 'POST',
        url: '/v1/transactions',
        key: m.test_key,
        payload: {
          amount: i + 1,
          title: `Item ${i}`,
          merchant_reference: `ref-${i}`,
          merchant_order_id: `order-${i % 5}`,
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      created.push(json<Txn>(res));
    }
    all = created.reverse();
    // One cancelled transaction, so the status filter has something to tell apart.
    await h.ctx.db.query(
      `UPDATE transactions SET status = 'cancelled', settlement_status = 'failed' WHERE id = $1`,
      [all[3]?.service_transaction_id],
    );
    const cancelled = all[3];
    if (cancelled) cancelled.status = 'cancelled';
  });
  after(() => h.close());

  describe('GET /v1/transactions/:id', () => {
    it('answers the transaction', async () => {
      const target = all[7];
      assert.ok(target);
      const res = await get(`/v1/transactions/${target.service_transaction_id}`);
      assert.equal(res.statusCode, 200);
      assert.equal(json<Txn>(res).service_transaction_id, target.service_transaction_id);
      assert.equal(json<Txn>(res).merchant_reference, target.merchant_reference);
    });

    it('answers 404 not_found for an unknown id', async () => {
      const res = await get('/v1/transactions/txn_01M0000000000000000000000');
      assert.equal(res.statusCode, 404);
      assert.equal(json<ErrorBody>(res).error.code, 'not_found');
      assert.equal(json<ErrorBody>(res).error.param, 'id');
    });

    it("answers 404 for another merchant's transaction and for the other environment", async () => {
      const other = await h.newMerchant();
      const id = all[0]?.service_transaction_id;
      assert.equal((await get(`/v1/transactions/${id}`, other.test_key)).statusCode, 404);
      assert.equal((await get(`/v1/transactions/${id}`, m.live_key)).statusCode, 404);
    });

    it('answers 400, not a 500, for an id with a NUL character', async () => {
      assertInvalid(await get('/v1/transactions/txn_%00'), 'id', /control characters/);
    });
  });

  describe('filters', () => {
    it('lists newest first with the list envelope and a default limit of 20', async () => {
      const body = await list('');
      assert.equal(body.object, 'list');
      assert.equal(body.data.length, 20);
      assert.equal(body.has_more, true);
      assert.deepEqual(ids(body.data), ids(all.slice(0, 20)));
      const times = body.data.map((t) => t.created_at);
      assert.deepEqual(times, [...times].sort().reverse());
    });

    it('answers everything with limit=100 and has_more false', async () => {
      const body = await list('limit=100');
      assert.deepEqual(ids(body.data), ids(all));
      assert.equal(body.has_more, false);
    });

    it('answers has_more false when the page is exactly the rest', async () => {
      const body = await list(`limit=${COUNT}`);
      assert.equal(body.data.length, COUNT);
      assert.equal(body.has_more, false);
      const short = await list(`limit=${COUNT - 1}`);
      assert.equal(short.has_more, true);
    });

    it('filters by status', async () => {
      const cancelled = await list('status=cancelled');
      assert.deepEqual(ids(cancelled.data), [all[3]?.service_transaction_id]);
      const pending = await list('status=pending_payment&limit=100');
      assert.equal(pending.data.length, COUNT - 1);
      assert.ok(pending.data.every((t) => t.status === 'pending_payment'));
      assert.deepEqual((await list('status=released')).data, []);
    });

    it('filters by merchant_reference', async () => {
      const body = await list('merchant_reference=ref-12');
      assert.deepEqual(
        body.data.map((t) => t.merchant_reference),
        ['ref-12'],
      );
      assert.equal(body.has_more, false);
      assert.deepEqual((await list('merchant_reference=ref-999')).data, []);
    });

    it('filters by merchant_order_id', async () => {
      const body = await list('merchant_order_id=order-2');
      assert.deepEqual(ids(body.data), ids(all.filter((t) => t.merchant_order_id === 'order-2')));
      assert.equal(body.data.length, 5);
    });

    it('filters by created[gte] (inclusive) and created[lt] (exclusive)', async () => {
      // all is newest first: all[20] is the 5th created, all[10] the 15th.
      const from = all[20]?.created_at ?? '';
      const to = all[10]?.created_at ?? '';
      const query = new URLSearchParams({ 'created[gte]': from, 'created[lt]': to, limit: '100' }).toString();
      assert.match(query, /created%5Bgte%5D=/);
      const body = await list(query);
      assert.deepEqual(ids(body.data), ids(all.slice(11, 21)));
      const raw = await list(`created[gte]=${from}&limit=100`);
      assert.deepEqual(ids(raw.data), ids(all.slice(0, 21)));
      const before = await list(`created[lt]=${to}&limit=100`);
      assert.deepEqual(ids(before.data), ids(all.slice(11)));
    });

    it('combines filters with each other', async () => {
      const from = all[10]?.created_at ?? '';
      const body = await list(
        `merchant_order_id=order-4&created[gte]=${encodeURIComponent(from)}&status=pending_payment`,
      );
      const expected = all
        .slice(0, 11)
        .filter((t) => t.merchant_order_id === 'order-4' && t.status === 'pending_payment');
      assert.ok(expected.length > 0);
      assert.deepEqual(ids(body.data), ids(expected));
    });

    it('shows only the calling merchant and environment', async () => {
      const other = await h.newMerchant();
      await h.request({
        method: 'POST',
        url: '/v1/transactions',
        key: other.test_key,
        payload: { amount: 1, title: 'theirs' },
      });
      assert.equal((await list('limit=100', other.test_key)).data.length, 1);
      assert.ok(!ids(await list('limit=100').then((b) => b.data)).some((id) => !ids(all).includes(id)));
      assert.deepEqual((await list('', m.live_key)).data, []);
    });
  });

  describe('cursor pagination', () => {
    it('walks the whole list forwards with starting_after, with no duplicates or gaps', async () => {
      const seen: Txn[] = [];
      const hasMore: boolean[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const body = await list(`limit=7${cursor ? `&starting_after=${cursor}` : ''}`);
        seen.push(...body.data);
        hasMore.push(body.has_more);
        if (!body.has_more) break;
        cursor = body.data.at(-1)?.service_transaction_id;
      }
      assert.deepEqual(ids(seen), ids(all));
      assert.deepEqual(hasMore, [true, true, true, false]);
    });

    it('walks the whole list backwards with ending_before, with no duplicates or gaps', async () => {
      const oldest = all.at(-1);
      assert.ok(oldest);
      const seen: Txn[] = [oldest];
      const hasMore: boolean[] = [];
      let cursor = oldest.service_transaction_id;
      for (let page = 0; page < 10; page++) {
        const body = await list(`limit=7&ending_before=${cursor}`);
        // Each page is still newest first, and it sits just before (newer than) the cursor.
        seen.unshift(...body.data);
        hasMore.push(body.has_more);
        if (!body.has_more) break;
        const first = body.data[0];
        assert.ok(first);
        cursor = first.service_transaction_id;
      }
      assert.deepEqual(ids(seen), ids(all));
      assert.deepEqual(hasMore, [true, true, true, false]);
    });

    it('pages back and forth to the same pages', async () => {
      const first = await list('limit=5');
      const second = await list(`limit=5&starting_after=${first.data.at(-1)?.service_transaction_id}`);
      const back = await list(`limit=5&ending_before=${second.data[0]?.service_transaction_id}`);
      assert.deepEqual(ids(back.data), ids(first.data));
      assert.equal(back.has_more, false);
    });

    it('paginates within a filter', async () => {
      const firstPage = await list('status=pending_payment&limit=2');
      const nextPage = await list(
        `status=pending_payment&limit=2&starting_after=${firstPage.data.at(-1)?.service_transaction_id}`,
      );
      const pending = all.filter((t) => t.status === 'pending_payment');
      assert.deepEqual(ids([...firstPage.data, ...nextPage.data]), ids(pending.slice(0, 4)));
    });

    it('answers an empty page after the oldest transaction', async () => {
      const body = await list(`starting_after=${all.at(-1)?.service_transaction_id}`);
      assert.deepEqual(body.data, []);
      assert.equal(body.has_more, false);
    });
  });

  describe('query validation', () => {
    const cases: Array<[string, string, string, RegExp]> = [
      ['limit=0', 'limit=0', 'limit', /limit must be >= 1/],
      ['limit=101', 'limit=101', 'limit', /limit must be <= 100/],
      ['limit=abc', 'limit=abc', 'limit', /limit must be of type integer/],
      ['limit=2.5', 'limit=2.5', 'limit', /limit must be of type integer/],
      ['an unknown status', 'status=paid', 'status', /status must be one of: pending_payment/],
      ['an unknown query parameter', 'colour=red', 'colour', /Unknown field 'colour' in the querystring/],
      ['a misspelt date filter', 'created[gt]=2026-01-01T00:00:00Z', 'created[gt]', /Unknown field/],
      ['created[gte] that is not a date-time', 'created[gte]=yesterday', 'created[gte]', /valid date-time/],
      ['created[lt] on a leap second', 'created[lt]=2026-12-31T23:59:60Z', 'created[lt]', /valid date-time/],
      ['an empty merchant_reference', 'merchant_reference=', 'merchant_reference', /fewer than 1/],
      ['a starting_after with NUL', 'starting_after=txn_%00', 'starting_after', /control characters/],
      ['a merchant_order_id with NUL', 'merchant_order_id=a%00b', 'merchant_order_id', /control characters/],
    ];
    for (const [name, query, param, message] of cases) {
      it(`refuses ${name} with 400 naming ${param}`, async () => {
        assertInvalid(await get(`/v1/transactions?${query}`), param, message);
      });
    }

    it('refuses starting_after and ending_before together with 400 naming ending_before', async () => {
      const a = all[2]?.service_transaction_id;
      const b = all[8]?.service_transaction_id;
      assertInvalid(
        await get(`/v1/transactions?starting_after=${a}&ending_before=${b}`),
        'ending_before',
        /not both/,
      );
    });

    it('takes limit=1 and limit=100', async () => {
      assert.equal((await list('limit=1')).data.length, 1);
      assert.equal((await list('limit=100')).data.length, COUNT);
    });
  });
});
