import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { type Harness, json } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  approvedTransaction,
  get,
  INSTANT,
  type Line,
  type List,
  listPayouts,
  type Payout,
  post,
  secondsToMidnight,
} from './helpers.ts';

describe('reading payouts', () => {
  const h = suiteHarness();

  describe('list filters and pages', () => {
    let key: string;
    let newest: Payout;
    let failed: Payout;
    let oldest: Payout;
    before(async () => {
      const m = await h.newMerchant();
      key = m.test_key;
      await post(h, '/v1/payout_settings', INSTANT, key);
      await approvedTransaction(h, { amount: 10 }, key);
      await advance(h, 3600, key);
      await post(h, '/v1/payout_settings', { ...INSTANT, phone: '+254700000001' }, key);
      await approvedTransaction(h, { amount: 20 }, key);
      await advance(h, 3600, key);
      // New settings after the failure retry its funds at once.
      await post(h, '/v1/payout_settings', INSTANT, key);
      await advance(h, 1, key);
      [newest, failed, oldest] = (await listPayouts(h, '', key)).data as [Payout, Payout, Payout];
    });

    it('lists newest first', () => {
      assert.deepEqual(
        [newest, failed, oldest].map((p) => [p.status, p.amount]),
        [
          ['paid', 20],
          ['failed', 20],
          ['paid', 10],
        ],
      );
    });

    it('filters by status', async () => {
      const ids = async (q: string) => (await listPayouts(h, q, key)).data.map((p) => p.id);
      assert.deepEqual(await ids('?status=paid'), [newest.id, oldest.id]);
      assert.deepEqual(await ids('?status=failed'), [failed.id]);
      assert.deepEqual(await ids('?status=reversed'), []);
    });

    it('filters by creation time', async () => {
      const at = encodeURIComponent(failed.created_at);
      const gte = await listPayouts(h, `?created%5Bgte%5D=${at}`, key);
      assert.deepEqual(
        gte.data.map((p) => p.id),
        [newest.id, failed.id],
      );
      const lt = await listPayouts(h, `?created%5Blt%5D=${at}`, key);
      assert.deepEqual(
        lt.data.map((p) => p.id),
        [oldest.id],
      );
    });

    it('pages with limit, starting_after and ending_before', async () => {
      const first = await listPayouts(h, '?limit=1', key);
      assert.deepEqual([first.data.map((p) => p.id), first.has_more], [[newest.id], true]);
      const second = await listPayouts(h, `?limit=1&starting_after=${newest.id}`, key);
      assert.deepEqual([second.data.map((p) => p.id), second.has_more], [[failed.id], true]);
      const last = await listPayouts(h, `?limit=5&starting_after=${failed.id}`, key);
      assert.deepEqual([last.data.map((p) => p.id), last.has_more], [[oldest.id], false]);
      const back = await listPayouts(h, `?limit=1&ending_before=${oldest.id}`, key);
      assert.deepEqual([back.data.map((p) => p.id), back.has_more], [[failed.id], true]);
    });

    it('answers 400 for bad list parameters', async () => {
      for (const [query, param] of [
        ['?status=lost', 'status'],
        ['?limit=0', 'limit'],
        ['?limit=101', 'limit'],
        ['?created%5Bgte%5D=yesterday', 'created[gte]'],
        [`?starting_after=${newest.id}&ending_before=${oldest.id}`, 'ending_before'],
        ['?currency=KES', 'currency'],
      ] as const) {
        const res = await h.request({ method: 'GET', url: `/v1/payouts${query}`, key });
        const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
        assert.equal(error.param, param, `${query}: ${error.message}`);
      }
    });
  });

  describe('a payout with more lines than it embeds', () => {
    let key: string;
    let payout: Payout;
    const ids: string[] = [];
    const refOf = new Map<string, string>();
    // Newest first means by id (ids sort by creation time; within one test-clock millisecond, by id).
    const newestFirst = () => [...ids].sort().reverse();
    before(async () => {
      const m = await h.newMerchant();
      key = m.test_key;
      for (let i = 0; i < 101; i++) {
        const t = await approvedTransaction(h, { amount: 1 + i, merchant_reference: `ref-${i}` }, key);
        ids.push(t.service_transaction_id);
        refOf.set(t.service_transaction_id, `ref-${i}`);
      }
      await advance(h, await secondsToMidnight(h, key), key);
      payout = (await listPayouts(h, '', key)).data[0] as Payout;
    });

    it('is one payout of 101 lines summing to its amount', async () => {
      assert.equal(payout.status, 'paid');
      assert.equal(payout.line_count, 101);
      assert.equal(payout.amount_minor, ((101 * 102) / 2) * 100);
      await assertLedgerSound(h.ctx.db);
    });

    it('embeds 100 lines in lists, and says there are more', () => {
      assert.equal(payout.lines.length, 100);
      assert.equal(payout.lines_has_more, true);
      assert.deepEqual(
        payout.lines.map((l) => l.service_transaction_id),
        newestFirst().slice(0, 100),
      );
    });

    it('embeds up to 1,000 lines in GET /v1/payouts/{id}', async () => {
      const one = await get<Payout>(h, `/v1/payouts/${payout.id}`, key);
      assert.equal(one.lines.length, 101);
      assert.equal(one.lines_has_more, false);
      assert.equal(
        one.lines.reduce((sum, l) => sum + l.amount_minor, 0),
        one.amount_minor,
      );
      const oldest = newestFirst().at(-1) ?? '';
      assert.equal(one.lines.at(-1)?.service_transaction_id, oldest);
      assert.equal(one.lines.at(-1)?.merchant_reference, refOf.get(oldest));
    });

    it('lists every line a page at a time, newest transaction first', async () => {
      const seen: Line[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await get<List<Line>>(
          h,
          `/v1/payouts/${payout.id}/lines?limit=30${after ? `&starting_after=${after}` : ''}`,
          key,
        );
        seen.push(...page.data);
        if (!page.has_more) break;
        after = page.data.at(-1)?.service_transaction_id;
      }
      const order = newestFirst();
      assert.deepEqual(
        seen.map((l) => l.service_transaction_id),
        order,
      );
      const oldest = order.at(-1) ?? '';
      const ref = refOf.get(oldest) ?? '';
      const amount = Number(ref.slice('ref-'.length)) + 1;
      assert.deepEqual(seen.at(-1), {
        service_transaction_id: oldest,
        merchant_reference: ref,
        merchant_order_id: null,
        amount,
        amount_minor: amount * 100,
      });
      const back = await get<List<Line>>(
        h,
        `/v1/payouts/${payout.id}/lines?limit=2&ending_before=${oldest}`,
        key,
      );
      assert.deepEqual(
        back.data.map((l) => l.service_transaction_id),
        [order.at(-3), order.at(-2)],
      );
      assert.equal(back.has_more, true);
    });
  });

  describe('isolation', () => {
    let payout: Payout;
    let owner: Awaited<ReturnType<Harness['newMerchant']>>;
    before(async () => {
      owner = await h.newMerchant({ verified: true });
      await post(h, '/v1/payout_settings', INSTANT, owner.test_key);
      await approvedTransaction(h, { amount: 5 }, owner.test_key);
      await advance(h, 1, owner.test_key);
      payout = (await listPayouts(h, '', owner.test_key)).data[0] as Payout;
    });

    it("answers 404 for another merchant's payout and its lines, and lists none of it", async () => {
      const other = await h.newMerchant();
      for (const url of [`/v1/payouts/${payout.id}`, `/v1/payouts/${payout.id}/lines`]) {
        const res = await h.request({ method: 'GET', url, key: other.test_key });
        assertErrorEnvelope(res, 404, 'not_found', 'not_found');
      }
      assert.deepEqual((await listPayouts(h, '', other.test_key)).data, []);
    });

    it('answers 404 to the live key for a test payout', async () => {
      const res = await h.request({ method: 'GET', url: `/v1/payouts/${payout.id}`, key: owner.live_key });
      assertErrorEnvelope(res, 404, 'not_found', 'not_found');
      assert.deepEqual((await listPayouts(h, '', owner.live_key)).data, []);
    });

    it('answers 404 for an unknown id', async () => {
      const res = await h.request({ method: 'GET', url: '/v1/payouts/po_unknown', key: owner.test_key });
      assertErrorEnvelope(res, 404, 'not_found', 'not_found');
    });
  });

  let ownPayoutId: string | undefined;
  const ownPayout = async (harness: Harness) => {
    if (ownPayoutId) return ownPayoutId;
    const key = harness.merchant.test_key;
    await post(harness, '/v1/payout_settings', INSTANT, key);
    await approvedTransaction(harness, { amount: 3 }, key);
    await advance(harness, 1, key);
    ownPayoutId = json<List<Payout>>(await harness.request({ method: 'GET', url: '/v1/payouts', key }))
      .data[0]?.id;
    assert.ok(ownPayoutId);
    return ownPayoutId;
  };
  commonAuthTests(() => h, { method: 'GET', url: '/v1/payouts', scope: 'payouts:read' });
  commonAuthTests(() => h, {
    method: 'GET',
    label: 'GET /v1/payouts/:id',
    url: async (harness) => `/v1/payouts/${await ownPayout(harness)}`,
    scope: 'payouts:read',
  });
  commonAuthTests(() => h, {
    method: 'GET',
    label: 'GET /v1/payouts/:id/lines',
    url: async (harness) => `/v1/payouts/${await ownPayout(harness)}/lines`,
    scope: 'payouts:read',
  });
  // A failed payout: every key that passes the auth checks gets the route's own answer, 409.
  const ownFailedPayout = async (harness: Harness) => {
    const key = harness.merchant.test_key;
    await post(harness, '/v1/payout_settings', { ...INSTANT, phone: '+254700000001' }, key);
    await approvedTransaction(harness, { amount: 4 }, key);
    await advance(harness, 1, key);
    const failed = await listPayouts(harness, '?status=failed', key);
    await post(harness, '/v1/payout_settings', INSTANT, key);
    assert.ok(failed.data[0]);
    return failed.data[0].id;
  };
  commonAuthTests(() => h, {
    method: 'POST',
    label: 'POST /v1/test_helpers/payouts/:id/reverse',
    url: async (harness) => `/v1/test_helpers/payouts/${await ownFailedPayout(harness)}/reverse`,
    payload: {},
    scope: 'payouts:write',
    okStatus: 409,
  });
});
