import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountBalances, transactionMoney } from '../../src/store/ledger.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

describe('the protected-payment lifecycle over HTTP', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const create = async (body: Record<string, unknown> = {}) =>
    json(
      await h.request({
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: 1500.5, title: 'Phone', ...body },
      }),
    );
  const post = (url: string, payload: Record<string, unknown> = {}) =>
    h.request({ method: 'POST', url, payload });

  it('create, pay, deliver, then the review window ends: confirmed and approved for release', async () => {
    const t = await create({ satisfaction_days: 2 });
    const id = String(t.service_transaction_id);
    const paid = await post(`/v1/test_helpers/transactions/${id}/pay`, {
      method: 'mobile_money',
      phone: '+254700000000',
    });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(json(paid).status, 'reserved');
    assert.equal(json(paid).settlement_status, 'pending_confirmation');

    const delivered = await post(`/v1/transactions/${id}/deliver`);
    assert.equal(delivered.statusCode, 200, delivered.body);
    assert.equal(json(delivered).status, 'delivered');
    assert.ok(json(delivered).review_deadline);

    const early = json(await post('/v1/test_helpers/clock/advance', { seconds: 2 * 86400 - 60 }));
    assert.equal(early.jobs_run, 0);
    const advanced = await post('/v1/test_helpers/clock/advance', { seconds: 120 });
    assert.equal(advanced.statusCode, 200, advanced.body);
    assert.equal(json(advanced).jobs_run, 1);

    const final = json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));
    assert.equal(final.status, 'confirmed');
    assert.equal(final.settlement_status, 'approved_for_release');
    assert.equal(final.amount_released, 1500.5);

    const [money] = await transactionMoney(h.ctx.db, [id]);
    assert.equal(money?.captured_minor, 150050n);
    assert.equal(money?.approved_minor, 150050n);
    const balances = await accountBalances(h.ctx.db, h.merchant.merchant_id);
    const of = (account: string) => balances.find((b) => b.account === account)?.balance_minor ?? 0n;
    assert.equal(of('escrow_held'), 0n);
    assert.equal(of('seller_payable'), -150050n);
    assert.equal(of('rail_clearing'), 150050n);
  });

  it('a cancelled push leaves the transaction payable, and a retry pays it', async () => {
    const id = String((await create()).service_transaction_id);
    const failed = json(
      await post(`/v1/test_helpers/transactions/${id}/pay`, {
        method: 'mobile_money',
        phone: '+254700001032',
      }),
    );
    assert.equal(failed.status, 'pending_payment');
    const ok = json(
      await post(`/v1/test_helpers/transactions/${id}/pay`, {
        method: 'card',
        card_number: '4242424242424242',
      }),
    );
    assert.equal(ok.status, 'reserved');
    assert.deepEqual(ok.payment_method, { type: 'card', last4: '4242' });
  });

  it('answers 409 for a move the state machine does not have, and changes nothing', async () => {
    const id = String((await create()).service_transaction_id);
    const res = await post(`/v1/transactions/${id}/deliver`);
    assert.equal(res.statusCode, 409);
    assert.equal(json<{ error: { code: string } }>(res).error.code, 'conflict');
    assert.equal(
      json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` })).status,
      'pending_payment',
    );
  });

  it('a 3-D Secure card through the test helper waits for its challenge, then times out with a card message', async () => {
    const id = String((await create()).service_transaction_id);
    const waiting = json(
      await post(`/v1/test_helpers/transactions/${id}/pay`, {
        method: 'card',
        card_number: '4000000000003220',
      }),
    );
    assert.equal(waiting.status, 'pending_payment');
    const attempt = waiting.last_payment_attempt as Record<string, unknown>;
    assert.equal(attempt.status, 'requires_action');
    await post('/v1/test_helpers/clock/advance', { seconds: 61 });
    const after = json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));
    const ended = after.last_payment_attempt as Record<string, unknown>;
    assert.equal(ended.status, 'failed');
    assert.equal(ended.failure_code, 'timeout');
    assert.match(String(ended.failure_message), /3-D Secure/);
  });

  it('a partial release keeps the rest under the review deadline, which then releases it', async () => {
    const id = String((await create({ amount: 100, satisfaction_days: 1 })).service_transaction_id);
    await post(`/v1/test_helpers/transactions/${id}/pay`, {
      method: 'card',
      card_number: '4242424242424242',
    });
    await post(`/v1/transactions/${id}/deliver`);
    const partial = json(await post(`/v1/transactions/${id}/release`, { amount: 30 }));
    assert.equal(partial.status, 'delivered');
    assert.equal(partial.amount_released, 30);
    await post('/v1/test_helpers/clock/advance', { seconds: 86400 + 1 });
    const done = json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));
    // The deadline approved the rest, and the daily payout run (midnight UTC, passed within the
    // day) paid all of it, so the transaction is released.
    assert.equal(done.status, 'released');
    assert.equal(done.amount_released, 100);
    const [money] = await transactionMoney(h.ctx.db, [id]);
    assert.equal(money?.approved_minor, 10000n);
  });

  it('a test payment that fails leaves its idempotency key unclaimed, so the retry runs again', async () => {
    const id = String((await create()).service_transaction_id);
    const body = { method: 'mobile_money', idempotency_key: 'pay-once' };
    const first = await post(`/v1/test_helpers/transactions/${id}/pay`, body);
    const again = await post(`/v1/test_helpers/transactions/${id}/pay`, body);
    assert.equal(first.statusCode, 400, first.body);
    assert.equal(again.statusCode, 400, again.body);
    assert.equal(again.headers['idempotent-replayed'], undefined);
  });
});
