import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCOPES } from '../../src/domain/api-keys.ts';
import { createKey } from '../../src/operations/manage-keys.ts';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { statusChanges } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { disputeOn, eventsOf, type Json, openDispute, paidTransaction, transaction } from './helpers.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('POST /v1/disputes, GET /v1/disputes(/{id})', () => {
  const h = suiteHarness({ operatorKey: true });

  it('opens a dispute on a delivered transaction: 201, disputed / under_review, dispute.opened after the status change', async () => {
    const { id } = await paidTransaction(h, {
      deliver: true,
      amount: 2500.5,
      body: { merchant_reference: 'ord-d1' },
    });
    h.clock.advance(1);
    const res = await openDispute(h, id, {
      reason: 'damaged',
      description: 'Screen cracked.\nBox crushed.',
      evidence: [
        { kind: 'text', content: 'Courier signed it as damaged.' },
        { kind: 'url', content: 'https://photos.example.com/a/1' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const d = json(res);
    assert.match(String(d.id), /^dsp_/);
    assert.equal(d.object, 'dispute');
    assert.equal(d.service_transaction_id, id);
    assert.equal(d.merchant_reference, 'ord-d1');
    assert.equal(d.merchant_order_id, null);
    assert.equal(d.status, 'open');
    assert.equal(d.reason, 'damaged');
    assert.equal(d.description, 'Screen cracked.\nBox crushed.');
    assert.equal(d.opened_by, 'seller');
    assert.equal(d.amount, 2500.5);
    assert.equal(d.amount_minor, 250050);
    assert.equal(d.currency, 'KES');
    assert.equal(d.outcome, null);
    assert.equal(d.livemode, false);
    assert.equal(
      new Date(String(d.evidence_due_by)).getTime() - new Date(String(d.created_at)).getTime(),
      7 * DAY_MS,
    );
    assert.match(String(d.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const evidence = d.evidence as Json[];
    assert.equal(evidence.length, 2);
    assert.deepEqual(
      evidence.map((e) => [e.kind, e.content, e.submitted_by, e.file_name, e.size_bytes]),
      [
        ['text', 'Courier signed it as damaged.', 'seller', null, null],
        ['url', 'https://photos.example.com/a/1', 'seller', null, null],
      ],
    );
    assert.match(String(evidence[0]?.id), /^evd_/);

    const t = await transaction(h, id);
    assert.equal(t.status, 'disputed');
    assert.equal(t.settlement_status, 'under_review');
    const changes = await statusChanges(h.ctx.db, id);
    assert.deepEqual(changes.at(-1), {
      previous_status: 'delivered',
      status: 'disputed',
      settlement_status: 'under_review',
    });
    const opened = await eventsOf(h, id, 'dispute.opened');
    assert.equal(opened.length, 1);
    assert.equal((opened[0]?.data as Json | undefined)?.id, d.id);
    assert.equal(opened[0]?.merchant_reference, 'ord-d1');
    const { rows } = await h.ctx.db.query<{ type: string }>(
      // One database transaction, one time: its events' ids sort in the order they were written.
      `SELECT type FROM events WHERE service_transaction_id = $1 ORDER BY created_at DESC, id DESC LIMIT 2`,
      [id],
    );
    assert.deepEqual(
      rows.map((r) => r.type),
      ['dispute.opened', 'transaction.status_changed'],
    );
    const jobs = await h.ctx.db.query<{ kind: string; run_at: Date }>(
      'SELECT kind, run_at FROM scheduled_jobs WHERE subject_id = $1',
      [d.id],
    );
    assert.deepEqual(
      jobs.rows.map((j) => [j.kind, j.run_at.toISOString()]),
      [['dispute_deadline', d.evidence_due_by]],
    );
  });

  it('opens on a reserved transaction too', async () => {
    const { id } = await paidTransaction(h);
    const d = await disputeOn(h, id, { reason: 'not_received' });
    assert.equal(d.status, 'open');
    assert.equal((await transaction(h, id)).status, 'disputed');
  });

  it('answers 409 from every other state and for a second dispute, changing nothing', async () => {
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 10, title: 'x' } }),
    );
    const unpaid = String(created.service_transaction_id);
    const confirmed = (await paidTransaction(h)).id;
    await h.request({ method: 'POST', url: `/v1/transactions/${confirmed}/confirm` });
    const cancelled = (await paidTransaction(h)).id;
    await h.request({ method: 'POST', url: `/v1/transactions/${cancelled}/cancel` });
    for (const [id, status] of [
      [unpaid, 'pending_payment'],
      [confirmed, 'confirmed'],
      [cancelled, 'refunded'],
    ] as const) {
      const res = await openDispute(h, id);
      const error = assertErrorEnvelope(res, 409, 'conflict', 'conflict');
      assert.match(error.message, new RegExp(status));
      assert.equal((await transaction(h, id)).status, status);
    }
    const { id } = await paidTransaction(h, { deliver: true });
    await disputeOn(h, id);
    const again = await openDispute(h, id, { reason: 'other', description: 'Again' });
    assertErrorEnvelope(again, 409, 'conflict', 'conflict');
    const { rows } = await h.ctx.db.query('SELECT id FROM disputes WHERE transaction_id = $1', [id]);
    assert.equal(rows.length, 1);
  });

  it('two concurrent openings on one transaction make one dispute; the other is 409', async () => {
    const { id } = await paidTransaction(h, { deliver: true });
    const results = await Promise.all([
      openDispute(h, id, { reason: 'damaged' }),
      openDispute(h, id, { reason: 'not_received' }),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409]);
    const { rows } = await h.ctx.db.query('SELECT id FROM disputes WHERE transaction_id = $1', [id]);
    assert.equal(rows.length, 1);
    assert.equal((await eventsOf(h, id, 'dispute.opened')).length, 1);
  });

  it('validates the body: 400 invalid_request naming the param', async () => {
    const { id } = await paidTransaction(h);
    const cases: [Json, string][] = [
      [{ reason: undefined }, 'reason'],
      [{ reason: 'changed_mind' }, 'reason'],
      [{ description: '' }, 'description'],
      [{ description: 'a\u0000b' }, 'description'],
      [{ description: 'x'.repeat(5001) }, 'description'],
      [{ description: 42 }, 'description'],
      [{ surprise: true }, 'surprise'],
      [{ evidence: [{ kind: 'file', content: 'x' }] }, 'evidence.0.kind'],
      [{ evidence: [{ kind: 'text', content: 'ok', extra: 1 }] }, 'evidence.0.extra'],
      [{ evidence: [{ kind: 'url', content: 'javascript:alert(1)' }] }, 'evidence.0.content'],
      [
        {
          evidence: [
            { kind: 'text', content: 'fine' },
            { kind: 'url', content: 'not a url' },
          ],
        },
        'evidence.1.content',
      ],
      [{ evidence: [{ kind: 'text', content: '   ' }] }, 'evidence.0.content'],
      [{ evidence: Array.from({ length: 21 }, () => ({ kind: 'text', content: 'x' })) }, 'evidence'],
      [{ service_transaction_id: undefined }, 'service_transaction_id'],
    ];
    for (const [patch, param] of cases) {
      const body: Json = {
        service_transaction_id: id,
        reason: 'other',
        description: 'Problem',
        ...patch,
      };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const res = await h.request({ method: 'POST', url: '/v1/disputes', payload: body });
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, `${JSON.stringify(patch).slice(0, 80)}: ${res.body}`);
    }
    assert.equal((await transaction(h, id)).status, 'reserved');
    const unknown = await openDispute(h, 'txn_01NOPE00000000000000000000');
    const error = assertErrorEnvelope(unknown, 404, 'not_found', 'not_found');
    assert.equal(error.param, 'service_transaction_id');
  });

  it('is idempotent: the same key and body replay 200, another body is 409, a failed attempt can be retried', async () => {
    const { id } = await paidTransaction(h);
    const headers = { 'idempotency-key': `open-${id}` };
    const first = await openDispute(h, id, {}, { headers });
    assert.equal(first.statusCode, 201);
    const replay = await openDispute(h, id, {}, { headers });
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(json(replay).id, json(first).id);
    const other = await openDispute(h, id, { reason: 'other' }, { headers });
    assertErrorEnvelope(other, 409, 'conflict', 'conflict');
    // The body field works the same way.
    const { id: id2 } = await paidTransaction(h);
    const a = await openDispute(h, id2, { idempotency_key: `body-${id2}` });
    const b = await openDispute(h, id2, { idempotency_key: `body-${id2}` });
    assert.equal(a.statusCode, 201);
    assert.equal(b.statusCode, 200);
    assert.equal(json(b).id, json(a).id);
    const { rows } = await h.ctx.db.query('SELECT id FROM disputes WHERE transaction_id = ANY($1)', [
      [id, id2],
    ]);
    assert.equal(rows.length, 2);
  });

  it('retrieves a dispute; another merchant, and the live key, get 404', async () => {
    const { id } = await paidTransaction(h);
    const d = await disputeOn(h, id);
    const got = await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` });
    assert.equal(got.statusCode, 200);
    assert.deepEqual(json(got), d);
    const other = await h.newMerchant({ verified: true });
    for (const key of [other.test_key, other.live_key]) {
      const res = await h.request({ method: 'GET', url: `/v1/disputes/${d.id}`, key });
      assertErrorEnvelope(res, 404, 'not_found', 'not_found');
    }
    const verified = await h.newMerchant({ verified: true });
    const { id: liveTxn } = await paidTransaction(h, { key: verified.test_key });
    const testDispute = await disputeOn(h, liveTxn, {}, verified.test_key);
    const live = await h.request({
      method: 'GET',
      url: `/v1/disputes/${testDispute.id}`,
      key: verified.live_key,
    });
    assertErrorEnvelope(live, 404, 'not_found', 'not_found');
    const list = json(await h.request({ method: 'GET', url: '/v1/disputes', key: verified.live_key }));
    assert.deepEqual(list.data, []);
    assertErrorEnvelope(
      await h.request({ method: 'GET', url: '/v1/disputes/dsp_01NOPE' }),
      404,
      'not_found',
      'not_found',
    );
  });

  it('lists newest first with filters and cursors', async () => {
    const m = await h.newMerchant();
    const ids: string[] = [];
    const txns: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await paidTransaction(h, { key: m.test_key, deliver: i % 2 === 0 });
      txns.push(id);
      // Ids sort by creation time; within one millisecond their order is not defined.
      h.clock.advance(1);
      ids.push(String((await disputeOn(h, id, {}, m.test_key)).id));
    }
    const list = async (query: string, key = m.test_key) => {
      const res = await h.request({ method: 'GET', url: `/v1/disputes${query}`, key });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      return { ids: (body.data as Json[]).map((d) => d.id), has_more: body.has_more, object: body.object };
    };
    const newestFirst = [...ids].reverse();
    assert.deepEqual(await list(''), { ids: newestFirst, has_more: false, object: 'list' });
    assert.deepEqual(await list('?limit=2'), {
      ids: newestFirst.slice(0, 2),
      has_more: true,
      object: 'list',
    });
    assert.deepEqual(await list(`?limit=2&starting_after=${newestFirst[1]}`), {
      ids: newestFirst.slice(2, 4),
      has_more: true,
      object: 'list',
    });
    assert.deepEqual(await list(`?limit=2&ending_before=${newestFirst[4]}`), {
      ids: newestFirst.slice(2, 4),
      has_more: true,
      object: 'list',
    });
    assert.deepEqual((await list(`?service_transaction_id=${txns[2]}`)).ids, [ids[2]]);
    assert.deepEqual((await list('?status=open')).ids, newestFirst);
    assert.deepEqual((await list('?status=resolved')).ids, []);
    // Resolve one and filter on it.
    const resolved = await h.request({
      method: 'POST',
      url: `/v1/disputes/${ids[1]}/resolve`,
      key: h.operatorKey,
      payload: { decision: 'seller' },
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.deepEqual((await list('?status=resolved')).ids, [ids[1]]);
    assert.deepEqual(
      (await list('?status=open')).ids,
      newestFirst.filter((x) => x !== ids[1]),
    );

    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?status=closed', 'status'],
      ['?bogus=1', 'bogus'],
      [`?starting_after=${ids[0]}&ending_before=${ids[1]}`, 'ending_before'],
      [`?merchant_id=${h.merchant.merchant_id}`, 'merchant_id'],
      ['?livemode=true', 'livemode'],
    ] as const) {
      const res = await h.request({ method: 'GET', url: `/v1/disputes${query}`, key: m.test_key });
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, query);
    }
  });

  it("lets the operator's key read every merchant's disputes, and narrow the list by merchant_id and livemode", async () => {
    const a = await h.newMerchant({ verified: true });
    const b = await h.newMerchant();
    const da = await disputeOn(h, (await paidTransaction(h, { key: a.test_key })).id, {}, a.test_key);
    const db = await disputeOn(h, (await paidTransaction(h, { key: b.test_key })).id, {}, b.test_key);
    for (const d of [da, db]) {
      const res = await h.request({ method: 'GET', url: `/v1/disputes/${d.id}`, key: h.operatorKey });
      assert.equal(res.statusCode, 200);
      assert.equal(json(res).id, d.id);
    }
    const all = json(await h.request({ method: 'GET', url: '/v1/disputes?limit=100', key: h.operatorKey }));
    const allIds = (all.data as Json[]).map((d) => d.id);
    assert.ok(allIds.includes(da.id) && allIds.includes(db.id));
    const onlyA = json(
      await h.request({
        method: 'GET',
        url: `/v1/disputes?merchant_id=${a.merchant_id}`,
        key: h.operatorKey,
      }),
    );
    assert.deepEqual(
      (onlyA.data as Json[]).map((d) => d.id),
      [da.id],
    );
    const live = json(
      await h.request({
        method: 'GET',
        url: `/v1/disputes?merchant_id=${a.merchant_id}&livemode=true`,
        key: h.operatorKey,
      }),
    );
    assert.deepEqual(live.data, []);
  });

  it('GET routes: 401 without a key, 403 without disputes:read, the operator key passes', async () => {
    const { id } = await paidTransaction(h);
    const d = await disputeOn(h, id);
    const noRead = await createKey(h.ctx, {
      merchantId: h.merchant.merchant_id,
      env: 'test',
      scopes: SCOPES.filter((s) => s !== 'disputes:read'),
    });
    const readOnly = await createKey(h.ctx, {
      merchantId: h.merchant.merchant_id,
      env: 'test',
      scopes: ['disputes:read'],
    });
    for (const url of ['/v1/disputes', `/v1/disputes/${d.id}`]) {
      assertErrorEnvelope(
        await h.request({ method: 'GET', url, key: null }),
        401,
        'invalid_api_key',
        'authentication_failed',
      );
      assertErrorEnvelope(
        await h.request({ method: 'GET', url, key: noRead.key }),
        403,
        'insufficient_permissions',
        'permission_denied',
      );
      assert.equal((await h.request({ method: 'GET', url, key: readOnly.key })).statusCode, 200);
      assert.equal((await h.request({ method: 'GET', url, key: h.operatorKey })).statusCode, 200);
    }
  });

  commonAuthTests(() => h, {
    method: 'POST',
    url: '/v1/disputes',
    payload: { service_transaction_id: 'txn_01NOPE00000000000000000000', reason: 'other', description: 'x' },
    scope: 'disputes:write',
    okStatus: 404,
  });
});
