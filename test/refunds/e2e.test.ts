import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Body, servedSuite } from '../helpers/served-suite.ts';
import { runCli } from '../helpers/spawn.ts';

/**
 * The whole story over TCP against the real server (`safehold serve`, API and worker): a sale is
 * paid, confirmed and paid out by the daily payout at midnight UTC; then the buyer gets part of
 * it back after release, from the merchant's balance; the balance shows it; the books verify.
 */
describe('a refund after release, end to end over HTTP', () => {
  const served = servedSuite();
  const { call, ok, advance } = served;

  it('create, pay, confirm, payout paid at midnight, refund after release, refund succeeded, balance', async () => {
    const sale = await ok(
      'POST',
      '/v1/transactions',
      { amount: 1500.5, title: 'Phone', merchant_reference: 'e2e-1' },
      201,
    );
    const id = String(sale.service_transaction_id);
    const card = { method: 'card', card_number: '4242424242424242' };
    assert.equal((await ok('POST', `/v1/test_helpers/transactions/${id}/pay`, card)).status, 'reserved');
    assert.equal((await ok('POST', `/v1/transactions/${id}/confirm`)).status, 'confirmed');
    // Another sale stays held, so the balance has something in escrow too.
    const other = await ok('POST', '/v1/transactions', { amount: 200, title: 'Case' }, 201);
    await ok('POST', `/v1/test_helpers/transactions/${other.service_transaction_id}/pay`, card);

    // Approved funds wait for the daily payout at midnight UTC (the default schedule).
    const now = new Date(String((await advance(1)).now));
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    await advance(Math.ceil((midnight - now.getTime()) / 1000) + 1);
    const released = await ok('GET', `/v1/transactions/${id}`);
    assert.equal(`${released.status}/${released.settlement_status}`, 'released/released');
    const payouts = (await ok('GET', '/v1/payouts?status=paid')).data as Body[];
    assert.equal(payouts.length, 1);
    assert.equal(payouts[0]?.amount, 1500.5);

    // A refund after release: from the merchant's balance, within the 30-day agreement window.
    const payload = { service_transaction_id: id, amount: 500.5, reason: 'requested_by_customer' };
    const created = await call('POST', '/v1/refunds', payload, {
      headers: { 'idempotency-key': 'e2e-refund' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status, 'pending');
    assert.equal(created.body.merchant_reference, 'e2e-1');
    const replay = await call('POST', '/v1/refunds', payload, {
      headers: { 'idempotency-key': 'e2e-refund' },
    });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.id, created.body.id);

    await advance(1);
    const refund = await ok('GET', `/v1/refunds/${created.body.id}`);
    assert.equal(refund.status, 'succeeded');
    const events = (await ok('GET', `/v1/events?type=refund.succeeded&service_transaction_id=${id}`))
      .data as Body[];
    assert.equal(events.length, 1);
    const after = await ok('GET', `/v1/transactions/${id}`);
    assert.equal(`${after.status}/${after.settlement_status}`, 'released/released', 'a partial refund');
    assert.equal(after.amount_refunded, 500.5);

    const balance = await ok('GET', '/v1/balance');
    assert.equal(balance.livemode, false);
    assert.deepEqual(balance.currencies, [
      {
        currency: 'KES',
        held: 200,
        held_minor: 20000,
        approved_for_release: 0,
        approved_for_release_minor: 0,
        in_transit: 0,
        in_transit_minor: 0,
        paid_out: 1500.5,
        paid_out_minor: 150050,
        refund_pending: 0,
        refund_pending_minor: 0,
        refunded: 500.5,
        refunded_minor: 50050,
        merchant_balance: -500.5,
        merchant_balance_minor: -50050,
      },
    ]);
  });

  it('the books verify once the server has stopped', async () => {
    await served.server.stop();
    const result = await runCli(['ledger', 'verify'], served.db.env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^ledger sound: 2 transactions, \d+ journal rows checked\n$/);
  });
});
