import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { disputeOn, type Json, multipart, PNG, paidTransaction } from './helpers.ts';

describe('disputes: environments, merchants, and the OpenAPI document', () => {
  const h = suiteHarness({ operatorKey: true });

  const upload = (id: string, key: string) => {
    const body = multipart({}, [{ filename: 'p.png', contentType: 'text/html', data: PNG }]);
    return h.request({
      method: 'POST',
      url: `/v1/disputes/${id}/evidence`,
      key,
      headers: body.headers,
      payload: body.payload,
    });
  };

  /** Uploads a PNG (claimed text/html) and returns its download path. */
  const fileUrl = async (id: string, key: string) =>
    String((json(await upload(id, key)).evidence as Json[] | undefined)?.[0]?.content);

  it('keeps live disputes from test keys and test disputes from live keys; the operator sees both', async () => {
    const m = await h.newMerchant({ verified: true });
    // A live transaction held in escrow: live rails are not reachable from tests, so its state is set
    // directly (this test checks visibility, not money).
    const created = json(
      await h.request({
        method: 'POST',
        url: '/v1/transactions',
        key: m.live_key,
        payload: { amount: 40, title: 'Live' },
      }),
    );
    const liveTxn = String(created.service_transaction_id);
    await h.ctx.db.query(
      `UPDATE transactions SET status = 'reserved', settlement_status = 'pending_confirmation' WHERE id = $1`,
      [liveTxn],
    );
    const live = await disputeOn(h, liveTxn, {}, m.live_key);
    assert.equal(live.livemode, true);
    const liveFile = await fileUrl(String(live.id), m.live_key);
    const test = await disputeOn(h, (await paidTransaction(h, { key: m.test_key })).id, {}, m.test_key);
    const testFile = await fileUrl(String(test.id), m.test_key);

    const cases: [string, unknown, string][] = [
      [m.test_key, live.id, liveFile],
      [m.live_key, test.id, testFile],
    ];
    for (const [key, id, file] of cases) {
      assertErrorEnvelope(
        await h.request({ method: 'GET', url: `/v1/disputes/${String(id)}`, key }),
        404,
        'not_found',
        'not_found',
      );
      assertErrorEnvelope(await h.request({ method: 'GET', url: file, key }), 404, 'not_found', 'not_found');
      assertErrorEnvelope(await upload(String(id), key), 404, 'not_found', 'not_found');
      const list = json(await h.request({ method: 'GET', url: '/v1/disputes', key }));
      assert.ok(!(list.data as Json[]).some((d) => d.id === id));
    }
    // The test transaction cannot be disputed with the live key either.
    const { id: testTxn } = await paidTransaction(h, { key: m.test_key });
    const cross = await h.request({
      method: 'POST',
      url: '/v1/disputes',
      key: m.live_key,
      payload: { service_transaction_id: testTxn, reason: 'other', description: 'x' },
    });
    assert.equal(assertErrorEnvelope(cross, 404, 'not_found', 'not_found').param, 'service_transaction_id');

    const byEnv = async (livemode: boolean) =>
      (
        json(
          await h.request({
            method: 'GET',
            url: `/v1/disputes?merchant_id=${m.merchant_id}&livemode=${livemode}`,
            key: h.operatorKey,
          }),
        ).data as Json[]
      ).map((d) => d.id);
    assert.deepEqual(await byEnv(true), [live.id]);
    assert.deepEqual(await byEnv(false), [test.id]);
    const file = await h.request({ method: 'GET', url: liveFile, key: h.operatorKey });
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'image/png', 'the sniffed type, not the claimed text/html');
  });

  it("another merchant's key cannot reach a dispute by any route", async () => {
    const owner = await h.newMerchant();
    const other = await h.newMerchant();
    const d = await disputeOn(h, (await paidTransaction(h, { key: owner.test_key })).id, {}, owner.test_key);
    const file = await fileUrl(String(d.id), owner.test_key);
    const id = String(d.id);
    for (const res of [
      await h.request({ method: 'GET', url: `/v1/disputes/${id}`, key: other.test_key }),
      await h.request({ method: 'GET', url: file, key: other.test_key }),
      await h.request({
        method: 'POST',
        url: `/v1/disputes/${id}/evidence`,
        key: other.test_key,
        payload: { kind: 'text', content: 'x' },
      }),
      await upload(id, other.test_key),
    ]) {
      assertErrorEnvelope(res, 404, 'not_found', 'not_found');
    }
    const list = json(
      await h.request({
        method: 'GET',
        url: `/v1/disputes?service_transaction_id=${String(d.service_transaction_id)}`,
        key: other.test_key,
      }),
    );
    assert.deepEqual(list.data, []);
    const resolve = await h.request({
      method: 'POST',
      url: `/v1/disputes/${id}/resolve`,
      key: owner.test_key,
      payload: { decision: 'seller' },
    });
    assertErrorEnvelope(resolve, 403, 'permission_denied', 'permission_denied');
    const after = json(await h.request({ method: 'GET', url: `/v1/disputes/${id}`, key: owner.test_key }));
    assert.equal(after.status, 'open');
    assert.equal((after.evidence as Json[]).length, 1);
  });

  it('the OpenAPI document describes every dispute route, the multipart upload and the file download', async () => {
    const doc = json<{ paths: Record<string, Record<string, Json>> }>(
      await h.request({ method: 'GET', url: '/docs/json', key: null }),
    );
    const paths = doc.paths;
    assert.ok(paths['/v1/disputes']?.post && paths['/v1/disputes']?.get);
    assert.ok(paths['/v1/disputes/{id}']?.get);
    assert.ok(paths['/v1/disputes/{id}/resolve']?.post);
    const evidence = paths['/v1/disputes/{id}/evidence']?.post as
      | { requestBody: { content: Json } }
      | undefined;
    assert.deepEqual(Object.keys(evidence?.requestBody.content ?? {}).sort(), [
      'application/json',
      'multipart/form-data',
    ]);
    const file = paths['/v1/disputes/{id}/evidence/{evidence_id}/file']?.get as {
      responses: Record<string, Json>;
    };
    assert.match(String(file.responses['200']?.description), /image\/png/);
  });
});
