import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCOPES } from '../../src/domain/api-keys.ts';
import { assertErrorEnvelope, commonAuthTests } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { get, post, secondsToMidnight } from './helpers.ts';

describe('payout settings', () => {
  const h = suiteHarness();

  it('keys made without a scope list can manage payouts (payouts:read and payouts:write)', () => {
    assert.ok(SCOPES.includes('payouts:read'));
    assert.ok(SCOPES.includes('payouts:write'));
  });

  it('in test mode, before any are saved, payouts go to the simulated M-Pesa number', async () => {
    const m = await h.newMerchant();
    assert.deepEqual(await get(h, '/v1/payout_settings', m.test_key), {
      object: 'payout_settings',
      method: 'mobile_money',
      destination: '****0000',
      bank_code: null,
      schedule: 'daily',
      simulated: true,
      livemode: false,
      updated_at: null,
    });
  });

  it('in live mode there is no method until one is saved', async () => {
    const m = await h.newMerchant({ verified: true });
    assert.deepEqual(await get(h, '/v1/payout_settings', m.live_key), {
      object: 'payout_settings',
      method: null,
      destination: null,
      bank_code: null,
      schedule: 'daily',
      simulated: false,
      livemode: true,
      updated_at: null,
    });
  });

  it('saves a mobile-money method, shown masked, and replaces it with a bank account', async () => {
    const m = await h.newMerchant();
    const res = await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254712345678' },
      m.test_key,
    );
    assert.equal(res.statusCode, 200, res.body);
    const saved = json(res);
    assert.ok(!res.body.includes('712345678'), 'the full number never shows');
    assert.equal(saved.method, 'mobile_money');
    assert.equal(saved.destination, '****5678');
    assert.equal(saved.schedule, 'daily', 'daily by default');
    assert.equal(saved.simulated, false);
    assert.match(String(saved.updated_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(await get(h, '/v1/payout_settings', m.test_key), saved);

    const bank = await post(
      h,
      '/v1/payout_settings',
      {
        method: 'bank_transfer',
        bank_code: 'KCBLKENX',
        account_number: '1234567890123',
        schedule: 'instant',
      },
      m.test_key,
    );
    assert.equal(bank.statusCode, 200, bank.body);
    assert.ok(!bank.body.includes('1234567890123'));
    const now = await get(h, '/v1/payout_settings', m.test_key);
    assert.equal(now.method, 'bank_transfer');
    assert.equal(now.destination, '****0123');
    assert.equal(now.bank_code, 'KCBLKENX');
    assert.equal(now.schedule, 'instant');
  });

  it('keeps test and live settings apart', async () => {
    const m = await h.newMerchant({ verified: true });
    await post(h, '/v1/payout_settings', { method: 'mobile_money', phone: '+254712345678' }, m.live_key);
    assert.equal((await get(h, '/v1/payout_settings', m.live_key)).destination, '****5678');
    assert.equal((await get(h, '/v1/payout_settings', m.test_key)).simulated, true);
    const other = await h.newMerchant();
    assert.equal((await get(h, '/v1/payout_settings', other.test_key)).destination, '****0000');
  });

  const invalidBodies: Array<[string, Record<string, unknown>, string]> = [
    ['no method', { phone: '+254712345678' }, 'method'],
    ['an unknown method', { method: 'cheque', phone: '+254712345678' }, 'method'],
    ['mobile money without a phone', { method: 'mobile_money' }, 'phone'],
    ['a phone that is not E.164', { method: 'mobile_money', phone: '0712345678' }, 'phone'],
    [
      'mobile money with a bank code',
      { method: 'mobile_money', phone: '+254712345678', bank_code: '01' },
      'bank_code',
    ],
    ['a bank transfer without an account', { method: 'bank_transfer', bank_code: '01' }, 'account_number'],
    [
      'a bank transfer without a bank code',
      { method: 'bank_transfer', account_number: '12345678' },
      'bank_code',
    ],
    [
      'a bank transfer with a phone',
      { method: 'bank_transfer', bank_code: '01', account_number: '12345678', phone: '+254712345678' },
      'phone',
    ],
    [
      'an account number with spaces',
      { method: 'bank_transfer', bank_code: '01', account_number: '1234 5678' },
      'account_number',
    ],
    [
      'a bank code too long',
      { method: 'bank_transfer', bank_code: 'ABCDEFGHIJKL', account_number: '12345678' },
      'bank_code',
    ],
    [
      'an unknown schedule',
      { method: 'mobile_money', phone: '+254712345678', schedule: 'weekly' },
      'schedule',
    ],
    ['an unknown field', { method: 'mobile_money', phone: '+254712345678', currency: 'KES' }, 'currency'],
  ];
  for (const [what, body, param] of invalidBodies) {
    it(`answers 400 naming ${param} for ${what}, and saves nothing`, async () => {
      const m = await h.newMerchant();
      const res = await post(h, '/v1/payout_settings', body, m.test_key);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, error.message);
      assert.equal((await get(h, '/v1/payout_settings', m.test_key)).simulated, true);
    });
  }

  it('replays the same idempotency key and refuses it with another body', async () => {
    const m = await h.newMerchant();
    const send = (phone: string) =>
      h.request({
        method: 'POST',
        url: '/v1/payout_settings',
        payload: { method: 'mobile_money', phone },
        key: m.test_key,
        headers: { 'idempotency-key': 'settings-1' },
      });
    const first = await send('+254712345678');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await send('+254712345678');
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(again), json(first));
    assertErrorEnvelope(await send('+254799999999'), 409, 'conflict', 'conflict');
    assert.equal((await get(h, '/v1/payout_settings', m.test_key)).destination, '****5678');
  });

  it('saving the instant schedule while approved funds wait pays them at once', async () => {
    const m = await h.newMerchant();
    const key = m.test_key;
    // One hour past midnight UTC on the test clock: the next daily run is far ahead.
    await post(
      h,
      '/v1/test_helpers/clock/advance',
      { seconds: (await secondsToMidnight(h, key)) + 3600 },
      key,
    );
    const created = await post(h, '/v1/transactions', { amount: 99, title: 'Lamp' }, key);
    const id = String(json(created).service_transaction_id);
    await post(
      h,
      `/v1/test_helpers/transactions/${id}/pay`,
      { method: 'mobile_money', phone: '+254712345678' },
      key,
    );
    await post(h, `/v1/transactions/${id}/confirm`, {}, key);
    // Daily by default: the run waits for the next midnight UTC.
    const { now } = json<{ now: string }>(
      await post(h, '/v1/test_helpers/clock/advance', { seconds: 1 }, key),
    );
    const { rows } = await h.ctx.db.query<{ run_at: Date }>(
      `SELECT run_at FROM scheduled_jobs WHERE kind = 'payout_run' AND merchant_id = $1`,
      [m.merchant_id],
    );
    const runAt = rows[0]?.run_at;
    assert.ok(runAt && runAt.getTime() % 86_400_000 === 0 && runAt > new Date(now), 'the next midnight');
    assert.deepEqual(
      json<{ data: unknown[] }>(await h.request({ method: 'GET', url: '/v1/payouts', key })).data,
      [],
    );

    await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254712345678', schedule: 'instant' },
      key,
    );
    await post(h, '/v1/test_helpers/clock/advance', { seconds: 1 }, key);
    const paid = json<{ data: Array<{ status: string }> }>(
      await h.request({ method: 'GET', url: '/v1/payouts', key }),
    );
    assert.deepEqual(
      paid.data.map((p) => p.status),
      ['paid'],
    );
  });

  commonAuthTests(() => h, { method: 'GET', url: '/v1/payout_settings', scope: 'payouts:read' });
  commonAuthTests(() => h, {
    method: 'POST',
    url: '/v1/payout_settings',
    payload: { method: 'mobile_money', phone: '+254712345678' },
    scope: 'payouts:write',
  });
});
