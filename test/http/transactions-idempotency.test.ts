import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

interface ErrorBody {
  error: { code: string; message: string; request_id: string; type: string; param?: string };
}

describe('POST /v1/transactions idempotency', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const create = (
    payload: Record<string, unknown>,
    options: { key?: string; idempotencyKey?: string } = {},
  ) =>
    h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload,
      key: options.key,
      headers: options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey },
    });

  const idOf = (res: LightMyRequestResponse) => String(json(res).service_transaction_id);

  function assertReplay(res: LightMyRequestResponse, original: LightMyRequestResponse): void {
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(res), json(original));
  }

  function assertError(
    res: LightMyRequestResponse,
    status: number,
    code: string,
    param: string,
    message: RegExp,
  ): void {
    assert.equal(res.statusCode, status, res.body);
    const { error } = json<ErrorBody>(res);
    assert.equal(error.code, code);
    assert.equal(error.param, param);
    assert.match(error.message, message);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  }

  async function countRows(table: string, merchantId: string): Promise<number> {
    const { rows } = await h.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE merchant_id = $1`,
      [merchantId],
    );
    return rows[0]?.n ?? -1;
  }

  it('replays a repeat with the same idempotency_key in the body: 200, Idempotent-Replayed, same transaction', async () => {
    const body = { amount: 10, title: 'Book', idempotency_key: 'body-key-1' };
    const first = await create(body);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    h.clock.advance(60);
    const second = await create(body);
    assertReplay(second, first);
  });

  it('replays a repeat with the same Idempotency-Key header', async () => {
    const body = { amount: 20, title: 'Pen' };
    const first = await create(body, { idempotencyKey: 'header-key-1' });
    assert.equal(first.statusCode, 201);
    const second = await create(body, { idempotencyKey: 'header-key-1' });
    assertReplay(second, first);
  });

  it('treats the key in the header and the same key in the body as one key', async () => {
    const body = { amount: 21, title: 'Pencil' };
    const first = await create(body, { idempotencyKey: 'either-key' });
    const second = await create({ ...body, idempotency_key: 'either-key' });
    assertReplay(second, first);
    const both = await create({ ...body, idempotency_key: 'either-key' }, { idempotencyKey: 'either-key' });
    assertReplay(both, first);
  });

  it('replays a body whose keys come in another order, since the request means the same', async () => {
    const first = await create(
      { amount: 22, title: 'Mug', metadata: { a: '1', b: '2' } },
      { idempotencyKey: 'order-key' },
    );
    const second = await create(
      { metadata: { b: '2', a: '1' }, title: 'Mug', amount: 22 },
      { idempotencyKey: 'order-key' },
    );
    assertReplay(second, first);
  });

  it('refuses the same idempotency key with a different body: 409 conflict naming idempotency_key', async () => {
    const first = await create({ amount: 30, title: 'Lamp', idempotency_key: 'reuse-key' });
    assert.equal(first.statusCode, 201);
    const other = await create({ amount: 31, title: 'Lamp', idempotency_key: 'reuse-key' });
    assertError(other, 409, 'conflict', 'idempotency_key', /already used with a different request/);
    const otherByHeader = await create({ amount: 30, title: 'Lamp shade' }, { idempotencyKey: 'reuse-key' });
    assertError(otherByHeader, 409, 'conflict', 'idempotency_key', /different request/);
    assert.equal(json<ErrorBody>(other).error.type, 'conflict');
  });

  it('refuses the same merchant_reference with a different body: 409 conflict naming merchant_reference', async () => {
    const first = await create({ amount: 40, title: 'Desk', merchant_reference: 'ref-conflict' });
    assert.equal(first.statusCode, 201);
    const other = await create({ amount: 41, title: 'Desk', merchant_reference: 'ref-conflict' });
    assertError(
      other,
      409,
      'conflict',
      'merchant_reference',
      /merchant_reference 'ref-conflict' is already used/,
    );
    // merchant_reference stays unique: a repeat days later is still a replay, never a second transaction.
    h.clock.advance(3 * 86_400);
    const later = await create({ amount: 40, title: 'Desk', merchant_reference: 'ref-conflict' });
    assertReplay(later, first);
  });

  it('replays by merchant_reference even when each attempt carries a new idempotency key', async () => {
    const body = { amount: 42, title: 'Rug', merchant_reference: 'ref-new-keys' };
    const first = await create(body, { idempotencyKey: 'attempt-1' });
    const second = await create(body, { idempotencyKey: 'attempt-2' });
    assertReplay(second, first);
    // The second key now remembers that answer too.
    const third = await create(body, { idempotencyKey: 'attempt-2' });
    assertReplay(third, first);
  });

  it('refuses a header key and a body key that differ, with 400 naming idempotency_key', async () => {
    const res = await create(
      { amount: 50, title: 'Cup', idempotency_key: 'body-side' },
      { idempotencyKey: 'header-side' },
    );
    assertError(res, 400, 'invalid_request', 'idempotency_key', /header and idempotency_key field differ/);
    // Neither key was claimed: each can still create.
    assert.equal(
      (await create({ amount: 50, title: 'Cup' }, { idempotencyKey: 'header-side' })).statusCode,
      201,
    );
    assert.equal((await create({ amount: 50, title: 'Cup', idempotency_key: 'body-side' })).statusCode, 201);
  });

  it('does not keep a key claimed by a request that failed, so a corrected retry runs afresh', async () => {
    await create({ amount: 60, title: 'Table', merchant_reference: 'ref-taken' });
    const failed = await create(
      { amount: 61, title: 'Table', merchant_reference: 'ref-taken' },
      { idempotencyKey: 'retry-key' },
    );
    assert.equal(failed.statusCode, 409);
    const retry = await create(
      { amount: 61, title: 'Table', merchant_reference: 'ref-free' },
      { idempotencyKey: 'retry-key' },
    );
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(json(retry).merchant_reference, 'ref-free');
  });

  it('does not claim a key for a request refused by validation', async () => {
    const refused = await create({ amount: -1, title: 'Bad' }, { idempotencyKey: 'invalid-first' });
    assert.equal(refused.statusCode, 400);
    const ok = await create({ amount: 1, title: 'Good' }, { idempotencyKey: 'invalid-first' });
    assert.equal(ok.statusCode, 201, ok.body);
  });

  it('scopes keys and references per merchant: another merchant with the same key and body gets its own transaction', async () => {
    const other = await h.newMerchant();
    const body = {
      amount: 70,
      title: 'Shared',
      merchant_reference: 'ref-shared',
      idempotency_key: 'shared-key',
    };
    const mine = await create(body);
    const theirs = await create(body, { key: other.test_key });
    assert.equal(mine.statusCode, 201);
    assert.equal(theirs.statusCode, 201);
    assert.notEqual(idOf(mine), idOf(theirs));
    // And the replays stay with their owners.
    assert.equal(idOf(await create(body, { key: other.test_key })), idOf(theirs));
    assert.equal(idOf(await create(body)), idOf(mine));
  });

  it('scopes keys and references per environment: the live key of the same merchant gets its own transaction', async () => {
    const verified = await h.newMerchant({ verified: true });
    const body = {
      amount: 80,
      title: 'Both worlds',
      merchant_reference: 'ref-env',
      idempotency_key: 'env-key',
    };
    const test = await create(body, { key: verified.test_key });
    const live = await create(body, { key: verified.live_key });
    assert.equal(test.statusCode, 201);
    assert.equal(live.statusCode, 201);
    assert.notEqual(idOf(test), idOf(live));
    assert.equal(json(test).livemode, false);
    assert.equal(json(live).livemode, true);
    const liveAgain = await create(body, { key: verified.live_key });
    assertReplay(liveAgain, live);
  });

  describe('20 concurrent identical creates', () => {
    async function race(merchant: CreatedMerchant, body: Record<string, unknown>, idempotencyKey?: string) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => create(body, { key: merchant.test_key, idempotencyKey })),
      );
      const statuses = responses.map((r) => r.statusCode).sort((a, b) => a - b);
      assert.deepEqual(
        statuses,
        [...Array<number>(19).fill(200), 201],
        responses.map((r) => r.body).join('\n'),
      );
      const ids = new Set(responses.map(idOf));
      assert.equal(ids.size, 1, 'every answer names the same transaction');
      for (const r of responses.filter((x) => x.statusCode === 200)) {
        assert.equal(r.headers['idempotent-replayed'], 'true');
      }
      assert.equal(await countRows('transactions', merchant.merchant_id), 1);
      assert.equal(await countRows('events', merchant.merchant_id), 1);
      assert.equal(await countRows('payment_links', merchant.merchant_id), 1);
      return [...ids][0];
    }

    it('make exactly one transaction when they share an Idempotency-Key', async () => {
      const merchant = await h.newMerchant();
      await race(merchant, { amount: 100, title: 'Race by key' }, 'race-key');
      assert.equal(await countRows('idempotency_keys', merchant.merchant_id), 1);
    });

    it('make exactly one transaction when they share an idempotency_key in the body', async () => {
      const merchant = await h.newMerchant();
      await race(merchant, { amount: 100, title: 'Race by body key', idempotency_key: 'race-body-key' });
    });

    it('make exactly one transaction when they share a merchant_reference and carry no key', async () => {
      const merchant = await h.newMerchant();
      const id = await race(merchant, {
        amount: 100,
        title: 'Race by reference',
        merchant_reference: 'race-ref',
      });
      const { rows } = await h.ctx.db.query<{ id: string }>(
        'SELECT id FROM transactions WHERE merchant_id = $1 AND merchant_reference = $2',
        [merchant.merchant_id, 'race-ref'],
      );
      assert.deepEqual(rows, [{ id }]);
      assert.equal(await countRows('idempotency_keys', merchant.merchant_id), 0);
    });

    it('make one transaction per distinct reference and one conflict per mismatched body when mixed', async () => {
      const merchant = await h.newMerchant();
      const same = { amount: 5, title: 'Same', merchant_reference: 'mixed-ref' };
      const responses = await Promise.all([
        ...Array.from({ length: 10 }, () => create(same, { key: merchant.test_key })),
        ...Array.from({ length: 5 }, (_, i) =>
          create({ ...same, merchant_reference: `mixed-${i}` }, { key: merchant.test_key }),
        ),
      ]);
      const sameAnswers = responses.slice(0, 10);
      assert.equal(sameAnswers.filter((r) => r.statusCode === 201).length, 1);
      assert.equal(sameAnswers.filter((r) => r.statusCode === 200).length, 9);
      assert.equal(new Set(sameAnswers.map(idOf)).size, 1);
      assert.ok(responses.slice(10).every((r) => r.statusCode === 201));
      assert.equal(await countRows('transactions', merchant.merchant_id), 6);
      const conflict = await create({ ...same, amount: 6 }, { key: merchant.test_key });
      assert.equal(conflict.statusCode, 409);
    });
  });
});
