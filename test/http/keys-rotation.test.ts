import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError } from '../../src/domain/errors.ts';
import { createKey, revokeKey, rotateKey } from '../../src/operations/manage-keys.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const HOUR = 60 * 60;

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const list = (key: string) => h.request({ method: 'GET', url: '/v1/transactions', key });

async function rejectsWith(promise: Promise<unknown>, code: string, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  });
}

describe('key rotation', () => {
  it('keeps the old key valid for exactly 24 hours beside the new one', async () => {
    const old = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const rotatedAt = h.clock.now().getTime();
    const rotated = await rotateKey(h.ctx, old.key_id);

    assert.notEqual(rotated.key, old.key);
    assert.notEqual(rotated.key_id, old.key_id);
    assert.match(rotated.key, /^sk_test_[A-Za-z0-9]{32,}$/);
    assert.equal(rotated.previous_key_expires_at, new Date(rotatedAt + 24 * HOUR * 1000).toISOString());

    assert.equal((await list(old.key)).statusCode, 200, 'old key right after rotation');
    assert.equal((await list(rotated.key)).statusCode, 200, 'new key right after rotation');

    h.clock.advance(23 * HOUR + 59 * 60);
    assert.equal((await list(old.key)).statusCode, 200, 'old key at +23h59m');
    h.clock.advance(59);
    assert.equal((await list(old.key)).statusCode, 200, 'old key one second before expiry');

    h.clock.advance(1); // exactly rotatedAt + 24 h
    const expired = await list(old.key);
    const error = assertErrorEnvelope(expired, 401, 'invalid_api_key', 'authentication_failed');
    assert.match(error.message, /rotated/);
    assert.equal((await list(rotated.key)).statusCode, 200, 'the new key does not expire');

    h.clock.advance(365 * 24 * HOUR);
    assert.equal((await list(rotated.key)).statusCode, 200, 'the new key a year later');
  });

  it('gives the new key the same merchant, environment and scopes', async () => {
    const old = await createKey(h.ctx, {
      merchantId: h.merchant.merchant_id,
      env: 'test',
      scopes: ['transactions:read'],
    });
    const rotated = await rotateKey(h.ctx, old.key_id);
    assert.equal((await list(rotated.key)).statusCode, 200);
    const write = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: rotated.key,
      payload: { amount: 1, title: 'Scope carried over' },
    });
    assertErrorEnvelope(write, 403, 'insufficient_permissions', 'permission_denied');
  });

  it('rotates a live key into a live key', async () => {
    const m = await h.newMerchant({ verified: true });
    const rotated = await rotateKey(h.ctx, m.live_key_id);
    assert.match(rotated.key, /^sk_live_/);
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: rotated.key,
      payload: { amount: 1, title: 'Live after rotation' },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().livemode, true);
  });

  it('refuses to rotate the same key twice with 409 conflict, and issues no extra key', async () => {
    const old = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const first = await rotateKey(h.ctx, old.key_id);
    const count = async () =>
      Number(
        (
          await h.ctx.db.query<{ n: bigint }>('SELECT count(*) AS n FROM api_keys WHERE merchant_id = $1', [
            h.merchant.merchant_id,
          ])
        ).rows[0]?.n,
      );
    const before = await count();
    await rejectsWith(rotateKey(h.ctx, old.key_id), 'conflict', 409);
    assert.equal(await count(), before, 'a refused rotation left a key behind');
    // The refused second rotation did not move the first one's expiry.
    const { rows } = await h.ctx.db.query<{ expires_at: Date; replaced_by: string }>(
      'SELECT expires_at, replaced_by FROM api_keys WHERE id = $1',
      [old.key_id],
    );
    assert.equal(rows[0]?.expires_at.toISOString(), first.previous_key_expires_at);
    assert.equal(rows[0]?.replaced_by, first.key_id);
  });

  it('lets two racing rotations of one key produce exactly one new key', async () => {
    const old = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const results = await Promise.allSettled([rotateKey(h.ctx, old.key_id), rotateKey(h.ctx, old.key_id)]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const rejected = results.find((r) => r.status === 'rejected');
    assert.ok(rejected?.status === 'rejected' && rejected.reason instanceof ApiError);
    assert.equal(rejected.reason.code, 'conflict');
  });

  it('refuses to rotate a revoked key with 409 conflict', async () => {
    const old = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    await revokeKey(h.ctx, old.key_id);
    await rejectsWith(rotateKey(h.ctx, old.key_id), 'conflict', 409);
    assertErrorEnvelope(await list(old.key), 401, 'invalid_api_key', 'authentication_failed');
  });

  it('answers 404 not_found for rotating or revoking a key that does not exist', async () => {
    await rejectsWith(rotateKey(h.ctx, 'key_doesnotexist'), 'not_found', 404);
    await rejectsWith(revokeKey(h.ctx, 'key_doesnotexist'), 'not_found', 404);
  });

  it('ends the grace period at once when the old key is revoked during it', async () => {
    const old = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    const rotated = await rotateKey(h.ctx, old.key_id);
    assert.equal((await list(old.key)).statusCode, 200);
    await revokeKey(h.ctx, old.key_id);
    const res = await list(old.key);
    const error = assertErrorEnvelope(res, 401, 'invalid_api_key', 'authentication_failed');
    assert.match(error.message, /revoked/);
    assert.equal((await list(rotated.key)).statusCode, 200, 'revoking the old key left the new one working');
  });
});

describe('key revocation', () => {
  it('refuses the key on the very next request and keeps the merchant’s other keys working', async () => {
    const m = await h.newMerchant();
    const spare = await createKey(h.ctx, { merchantId: m.merchant_id, env: 'test' });
    assert.equal((await list(m.test_key)).statusCode, 200);
    await revokeKey(h.ctx, m.test_key_id);
    assertErrorEnvelope(await list(m.test_key), 401, 'invalid_api_key', 'authentication_failed');
    assert.equal((await list(spare.key)).statusCode, 200);
  });

  it('is harmless to repeat', async () => {
    const k = await createKey(h.ctx, { merchantId: h.merchant.merchant_id, env: 'test' });
    await revokeKey(h.ctx, k.key_id);
    await revokeKey(h.ctx, k.key_id);
    assertErrorEnvelope(await list(k.key), 401, 'invalid_api_key', 'authentication_failed');
  });
});
