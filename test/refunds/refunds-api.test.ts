import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { type Body, client } from './support.ts';

const h = suiteHarness();
const harness = () => h;
const c = client(harness);

/** Refunds' validation, conflicts, idempotency, isolation and reads; then each route's auth checks. */
describe('the refunds API', () => {
  const count = async (transactionId: string, key?: string) =>
    json<{ data: Body[] }>(await c.get(`/v1/refunds?service_transaction_id=${transactionId}`, key)).data
      .length;

  describe('states without a refund: 409 conflict, nothing changes', () => {
    it('pending_payment, cancelled and confirmed (awaiting payout) cannot be refunded', async () => {
      const unpaid = String(
        json(await c.post('/v1/transactions', { amount: 50, title: 'Pen' })).service_transaction_id,
      );
      let error = assertErrorEnvelope(
        await c.refund({ service_transaction_id: unpaid }),
        409,
        'conflict',
        'conflict',
      );
      assert.match(error.message, /pending_payment: it has not been paid; cancel it instead/);

      await c.post(`/v1/transactions/${unpaid}/cancel`);
      error = assertErrorEnvelope(
        await c.refund({ service_transaction_id: unpaid }),
        409,
        'conflict',
        'conflict',
      );
      assert.match(error.message, /cancelled: it was never paid/);

      const confirmed = await c.paid();
      assert.equal(json(await c.post(`/v1/transactions/${confirmed}/confirm`)).status, 'confirmed');
      error = assertErrorEnvelope(
        await c.refund({ service_transaction_id: confirmed, amount: 1 }),
        409,
        'conflict',
        'conflict',
      );
      assert.match(error.message, /confirmed: its funds are approved for release and wait for the seller/);
      const t = await c.transaction(confirmed);
      assert.equal(t.amount_refunded, 0);
      assert.equal(await count(confirmed), 0);
    });

    it('an expired transaction cannot be refunded', async () => {
      const m = await h.newMerchant();
      const created = json(await c.post('/v1/transactions', { amount: 50, title: 'Pen' }, m.test_key));
      await c.advance(86_400 + 1, m.test_key);
      const id = String(created.service_transaction_id);
      assert.equal((await c.transaction(id, m.test_key)).status, 'expired');
      const res = await c.refund({ service_transaction_id: id }, m.test_key);
      assert.match(
        assertErrorEnvelope(res, 409, 'conflict', 'conflict').message,
        /expired: it was never paid/,
      );
    });

    it('a disputed transaction cannot be refunded: the dispute’s outcome decides', async () => {
      const id = await c.paid({ deliver: true });
      const opened = await c.post('/v1/disputes', {
        service_transaction_id: id,
        reason: 'not_as_described',
        description: 'The lamp is blue, not red.',
      });
      assert.equal(opened.statusCode, 201, opened.body);
      assert.equal((await c.transaction(id)).status, 'disputed');
      const error = assertErrorEnvelope(
        await c.refund({ service_transaction_id: id }),
        409,
        'conflict',
        'conflict',
      );
      assert.match(
        error.message,
        /disputed: a dispute is open; its outcome decides what goes back to the buyer/,
      );
      assert.equal(await count(id), 0);
    });

    it('a refunded transaction cannot be refunded again', async () => {
      const id = await c.paid();
      assert.equal((await c.refund({ service_transaction_id: id })).statusCode, 201);
      const error = assertErrorEnvelope(
        await c.refund({ service_transaction_id: id }),
        409,
        'conflict',
        'conflict',
      );
      assert.match(error.message, /refunded: it is already refunded/);
      await c.advance(1);
      assertErrorEnvelope(
        await c.refund({ service_transaction_id: id, amount: 1 }),
        409,
        'conflict',
        'conflict',
      );
      assert.equal(await count(id), 1);
    });
  });

  describe('input: 400 invalid_request with the param at fault', () => {
    let id = '';
    before(async () => {
      id = await c.paid();
    });
    const param = async (payload: Body, expected: string, message?: RegExp) => {
      const error = assertErrorEnvelope(await c.refund(payload), 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, expected, JSON.stringify(payload));
      if (message) assert.match(error.message, message);
    };

    it('an amount above what is refundable, zero, negative or with too many decimals', async () => {
      await param(
        { service_transaction_id: id, amount: 1000.01 },
        'amount',
        /at most what can still be refunded/,
      );
      await param({ service_transaction_id: id, amount: 0 }, 'amount');
      await param({ service_transaction_id: id, amount: -5 }, 'amount');
      await param(
        { service_transaction_id: id, amount: 10.555 },
        'amount',
        /more than 2 decimal places for KES/,
      );
      await param({ service_transaction_id: id, amount: '10' }, 'amount');
      assert.equal((await c.transaction(id)).amount_refunded, 0);
    });

    it('a missing transaction id, an unknown reason, an unknown field', async () => {
      await param({ amount: 1 }, 'service_transaction_id');
      await param({ service_transaction_id: id, reason: 'changed_my_mind' }, 'reason');
      await param({ service_transaction_id: id, note: 'x' }, 'note');
      await param({ service_transaction_id: id, idempotency_key: '' }, 'idempotency_key');
    });

    it('a header key and a body key that differ', async () => {
      const res = await c.refund({ service_transaction_id: id, amount: 1, idempotency_key: 'a' }, undefined, {
        'idempotency-key': 'b',
      });
      assert.equal(
        assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request').param,
        'idempotency_key',
      );
      assert.equal(await count(id), 0);
    });

    it('a whole-unit currency refuses decimals', async () => {
      const ugx = await c.paid({ amount: 5000, body: { currency: 'UGX' } });
      await param({ service_transaction_id: ugx, amount: 10.5 }, 'amount', /whole number for UGX/);
      const ok = await c.refund({ service_transaction_id: ugx, amount: 1500 });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.equal(json(ok).amount, 1500);
      assert.equal(json(ok).amount_minor, 1500);
      assert.equal(json(ok).currency, 'UGX');
    });
  });

  describe('idempotency', () => {
    it('the same key twice makes one refund: 201, then 200 with Idempotent-Replayed', async () => {
      const id = await c.paid();
      const payload = { service_transaction_id: id, amount: 10 };
      const first = await c.refund(payload, undefined, { 'idempotency-key': 'refund-1' });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await c.refund(payload, undefined, { 'idempotency-key': 'refund-1' });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(json(again).id, json(first).id);
      assert.equal(await count(id), 1);
      assert.equal((await c.transaction(id)).amount_refunded, 10);

      // The body field works the same way; the same key with another body is a conflict.
      const viaBody = await c.refund({ ...payload, idempotency_key: 'refund-2' });
      const viaBodyAgain = await c.refund({ ...payload, idempotency_key: 'refund-2' });
      assert.equal(viaBody.statusCode, 201);
      assert.equal(viaBodyAgain.statusCode, 200);
      assert.equal(json(viaBodyAgain).id, json(viaBody).id);
      const other = await c.refund({ service_transaction_id: id, amount: 11 }, undefined, {
        'idempotency-key': 'refund-1',
      });
      assert.equal(assertErrorEnvelope(other, 409, 'conflict', 'conflict').param, 'idempotency_key');
      assert.equal(await count(id), 2);
      assert.equal((await c.transaction(id)).amount_refunded, 20);
    });

    it('a replay shows the refund as it is now (succeeded after the rail answered)', async () => {
      const id = await c.paid();
      const payload = { service_transaction_id: id };
      const first = json(await c.refund(payload, undefined, { 'idempotency-key': 'refund-later' }));
      assert.equal(first.status, 'pending');
      await c.advance(1);
      const replay = await c.refund(payload, undefined, { 'idempotency-key': 'refund-later' });
      assert.equal(replay.statusCode, 200);
      assert.equal(json(replay).id, first.id);
      assert.equal(json(replay).status, 'succeeded');
    });

    it('two concurrent requests with one key make one refund; without a key the second finds nothing left', async () => {
      const id = await c.paid();
      const headers = { 'idempotency-key': 'race-1' };
      const both = await Promise.all([
        c.refund({ service_transaction_id: id }, undefined, headers),
        c.refund({ service_transaction_id: id }, undefined, headers),
      ]);
      assert.deepEqual(both.map((r) => r.statusCode).sort(), [200, 201], both.map((r) => r.body).join('\n'));
      assert.equal(json(both[0] as never).id, json(both[1] as never).id);
      assert.equal(await count(id), 1);

      const other = await c.paid();
      const racing = await Promise.all([
        c.refund({ service_transaction_id: other }),
        c.refund({ service_transaction_id: other }),
      ]);
      assert.deepEqual(racing.map((r) => r.statusCode).sort(), [201, 409]);
      assert.equal(await count(other), 1);
      assert.equal((await c.transaction(other)).amount_refunded, 1000);
      await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'concurrent refunds');
    });
  });

  describe('isolation: another merchant or environment is 404 not_found', () => {
    let other: CreatedMerchant;
    let theirs = '';
    let theirRefund = '';
    before(async () => {
      other = await h.newMerchant({ verified: true });
      theirs = await c.paid({ key: other.test_key });
      theirRefund = String(
        json(await c.refund({ service_transaction_id: theirs, amount: 5 }, other.test_key)).id,
      );
    });

    it('refunding another merchant’s transaction, or one of the other environment', async () => {
      const res = await c.refund({ service_transaction_id: theirs });
      assert.equal(assertErrorEnvelope(res, 404, 'not_found', 'not_found').param, 'service_transaction_id');
      const live = await c.refund({ service_transaction_id: theirs }, other.live_key);
      assertErrorEnvelope(live, 404, 'not_found', 'not_found');
      const unknown = await c.refund({ service_transaction_id: 'txn_00000000000000000000000000' });
      assertErrorEnvelope(unknown, 404, 'not_found', 'not_found');
      assert.equal((await c.transaction(theirs, other.test_key)).amount_refunded, 5);
    });

    it('reading another merchant’s refund, or it with the live key', async () => {
      assertErrorEnvelope(await c.get(`/v1/refunds/${theirRefund}`), 404, 'not_found', 'not_found');
      assertErrorEnvelope(
        await c.get(`/v1/refunds/${theirRefund}`, other.live_key),
        404,
        'not_found',
        'not_found',
      );
      assert.equal((await c.get(`/v1/refunds/${theirRefund}`, other.test_key)).statusCode, 200);
      const mine = json<{ data: Body[] }>(await c.get(`/v1/refunds?service_transaction_id=${theirs}`));
      assert.deepEqual(mine.data, []);
      const live = json<{ data: Body[] }>(await c.get('/v1/refunds', other.live_key));
      assert.deepEqual(live.data, []);
    });
  });

  describe('GET /v1/refunds', () => {
    let m: CreatedMerchant;
    const ids: string[] = [];
    let txn = '';
    before(async () => {
      m = await h.newMerchant();
      txn = await c.paid({ key: m.test_key });
      for (const amount of [1, 2, 3]) {
        h.clock.advance(1); // ids sort by time: one refund per millisecond at least
        ids.push(String(json(await c.refund({ service_transaction_id: txn, amount }, m.test_key)).id));
      }
      const second = await c.paid({ key: m.test_key });
      h.clock.advance(1);
      ids.push(String(json(await c.refund({ service_transaction_id: second, amount: 4 }, m.test_key)).id));
    });
    const list = async (query: string) => {
      const res = await c.get(`/v1/refunds${query}`, m.test_key);
      assert.equal(res.statusCode, 200, res.body);
      return json<{ object: string; data: Body[]; has_more: boolean }>(res);
    };

    it('lists newest first, in pages either way', async () => {
      const all = await list('');
      assert.equal(all.object, 'list');
      assert.deepEqual(
        all.data.map((r) => r.id),
        [...ids].reverse(),
      );
      const page1 = await list('?limit=2');
      assert.deepEqual(
        page1.data.map((r) => r.id),
        [ids[3], ids[2]],
      );
      assert.equal(page1.has_more, true);
      const page2 = await list(`?limit=2&starting_after=${ids[2]}`);
      assert.deepEqual(
        page2.data.map((r) => r.id),
        [ids[1], ids[0]],
      );
      assert.equal(page2.has_more, false);
      const back = await list(`?limit=1&ending_before=${ids[1]}`);
      assert.deepEqual(
        back.data.map((r) => r.id),
        [ids[2]],
      );
      assert.equal(back.has_more, true);
      const both = await c.get(`/v1/refunds?starting_after=${ids[1]}&ending_before=${ids[2]}`, m.test_key);
      assertErrorEnvelope(both, 400, 'invalid_request', 'invalid_request');
      assertErrorEnvelope(
        await c.get('/v1/refunds?limit=101', m.test_key),
        400,
        'invalid_request',
        'invalid_request',
      );
    });

    it('filters by transaction and by status', async () => {
      assert.deepEqual(
        (await list(`?service_transaction_id=${txn}`)).data.map((r) => r.amount),
        [3, 2, 1],
      );
      assert.equal((await list('?status=pending')).data.length, 4);
      assert.equal((await list('?status=succeeded')).data.length, 0);
      await c.advance(1, m.test_key);
      assert.equal((await list('?status=succeeded')).data.length, 4);
      assert.equal((await list('?status=pending')).data.length, 0);
      assertErrorEnvelope(
        await c.get('/v1/refunds?status=done', m.test_key),
        400,
        'invalid_request',
        'invalid_request',
      );
    });

    it('GET /v1/refunds/{id} answers the refund; an unknown id is 404', async () => {
      const res = await c.get(`/v1/refunds/${ids[0]}`, m.test_key);
      assert.equal(res.statusCode, 200);
      assert.equal(json(res).id, ids[0]);
      assert.equal(json(res).service_transaction_id, txn);
      assertErrorEnvelope(await c.get('/v1/refunds/rfd_nope', m.test_key), 404, 'not_found', 'not_found');
    });
  });
});

// Auth: POST needs refunds:write; reading needs transactions:read (there is no refunds:read).
let readable = '';
commonAuthTests(harness, {
  method: 'POST',
  label: '/v1/refunds',
  url: async (hh) => {
    readable = await client(() => hh).paid({ amount: 100_000 });
    return '/v1/refunds';
  },
  get payload() {
    return { service_transaction_id: readable, amount: 1 };
  },
  scope: 'refunds:write',
  okStatus: 201,
});
commonAuthTests(harness, {
  method: 'GET',
  label: '/v1/refunds/:id',
  url: async (hh) => {
    const cc = client(() => hh);
    const id = await cc.paid();
    return `/v1/refunds/${json(await cc.refund({ service_transaction_id: id })).id}`;
  },
  scope: 'transactions:read',
});
commonAuthTests(harness, { method: 'GET', url: '/v1/refunds', scope: 'transactions:read' });
