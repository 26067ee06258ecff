import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Body, servedSuite } from '../helpers/served-suite.ts';
import { runCli } from '../helpers/spawn.ts';

/**
 * Every path the money can take after it is held, over TCP against the real server (`safehold
 * serve`: API and worker): the three dispute outcomes decided with the operator's key, a payout
 * that fails and is paid after the seller fixes the destination, and a payout the rail reverses.
 * The books are verified with `safehold ledger verify` once the server has stopped.
 */
describe('money paths end to end over HTTP: disputes, payouts failed and retried, reversal', () => {
  const served = servedSuite();
  const { call, ok, advance } = served;

  const transaction = (id: string) => ok('GET', `/v1/transactions/${id}`);
  const state = async (id: string) => {
    const t = await transaction(id);
    return `${t.status}/${t.settlement_status}`;
  };

  /** A transaction paid by card and delivered. */
  async function delivered(amount: number, title: string): Promise<string> {
    const id = String((await ok('POST', '/v1/transactions', { amount, title }, 201)).service_transaction_id);
    const card = { method: 'card', card_number: '4242424242424242' };
    assert.equal((await ok('POST', `/v1/test_helpers/transactions/${id}/pay`, card)).status, 'reserved');
    assert.equal((await ok('POST', `/v1/transactions/${id}/deliver`)).status, 'delivered');
    return id;
  }

  async function disputed(amount: number): Promise<{ id: string; dispute: string }> {
    const id = await delivered(amount, 'Disputed order');
    const opened = await ok(
      'POST',
      '/v1/disputes',
      { service_transaction_id: id, reason: 'not_as_described', description: 'Not what was listed.' },
      201,
    );
    assert.equal(await state(id), 'disputed/under_review');
    return { id, dispute: String(opened.id) };
  }

  const resolve = (dispute: string, body: Body, key = served.keys.operatorKey) =>
    call('POST', `/v1/disputes/${dispute}/resolve`, body, { key });

  it('seller wins: the held funds are approved for release; a merchant key may not decide', async () => {
    const { id, dispute } = await disputed(800);
    assert.equal((await resolve(dispute, { decision: 'seller' }, served.keys.testKey)).status, 403);
    const decided = await resolve(dispute, { decision: 'seller', note: 'Proof of delivery' });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal((decided.body.outcome as Body).decision, 'seller');
    assert.equal(await state(id), 'confirmed/approved_for_release');
    assert.equal((await transaction(id)).amount_released, 800);
  });

  it('buyer wins: everything held is refunded, and the rail settles the refund', async () => {
    const { id, dispute } = await disputed(650);
    assert.equal((await resolve(dispute, { decision: 'buyer' })).status, 200);
    // The server's own worker may already have had the rail settle the refund (it is due at once).
    assert.match(await state(id), /^refunded\/(refund_pending|refunded)$/);
    await advance(1);
    assert.equal(await state(id), 'refunded/refunded');
    const refunds = (await ok('GET', `/v1/refunds?service_transaction_id=${id}`)).data as Body[];
    assert.deepEqual(
      refunds.map((r) => [r.status, r.amount, r.origin, r.dispute_id]),
      [['succeeded', 650, 'dispute', dispute]],
    );
  });

  it('split: the seller part is approved, the buyer part refunded', async () => {
    const { id, dispute } = await disputed(1000);
    const decided = await resolve(dispute, { decision: 'split', amount_to_buyer: 350 });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.deepEqual(
      [(decided.body.outcome as Body).amount_to_seller, (decided.body.outcome as Body).amount_to_buyer],
      [650, 350],
    );
    await advance(1);
    const t = await transaction(id);
    assert.deepEqual(
      [t.status, t.settlement_status, t.amount_released, t.amount_refunded],
      ['confirmed', 'approved_for_release', 650, 350],
    );
    const events = (await ok('GET', `/v1/events?service_transaction_id=${id}&limit=50`)).data as Body[];
    const types = events.map((e) => e.type);
    for (const type of ['dispute.opened', 'dispute.resolved', 'refund.succeeded']) {
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    }
  });

  it('a payout to a failing destination fails, its funds wait, and are paid once the destination is fixed', async () => {
    // The three approved amounts above (800, 650 of the split) and a new one are waiting.
    const fresh = await delivered(400, 'Lamp');
    await ok('POST', `/v1/transactions/${fresh}/confirm`);
    const failing = { method: 'mobile_money', phone: '+254711000001', schedule: 'instant' };
    await ok('POST', '/v1/payout_settings', failing);
    await advance(1);
    const failed = (await ok('GET', '/v1/payouts?status=failed')).data as Body[];
    assert.equal(failed.length, 1, JSON.stringify(failed));
    assert.equal(failed[0]?.amount, 1850);
    assert.match(String(failed[0]?.failure_reason), /0001/);
    assert.equal(await state(fresh), 'confirmed/approved_for_release');
    assert.equal(((await ok('GET', '/v1/balance')).currencies as Body[])[0]?.approved_for_release, 1850);

    await ok('POST', '/v1/payout_settings', { ...failing, phone: '+254711223344' });
    await advance(1);
    const paid = (await ok('GET', '/v1/payouts?status=paid')).data as Body[];
    assert.equal(paid.length, 1, JSON.stringify(paid));
    assert.equal(paid[0]?.amount, 1850);
    assert.equal(paid[0]?.line_count, 3);
    assert.equal(await state(fresh), 'released/released');
    const completed = (
      await ok('GET', `/v1/events?type=transaction.completed&service_transaction_id=${fresh}`)
    ).data as Body[];
    assert.equal(completed.length, 1);
  });

  it('a paid payout reversed by the rail: the payout reversed, its transactions released / reversed', async () => {
    const [paid] = (await ok('GET', '/v1/payouts?status=paid')).data as Body[];
    const reversed = await ok('POST', `/v1/test_helpers/payouts/${paid?.id}/reverse`);
    assert.equal(reversed.status, 'reversed');
    const lines = (await ok('GET', `/v1/payouts/${paid?.id}/lines?limit=100`)).data as Body[];
    for (const line of lines) {
      const t = await transaction(String(line.service_transaction_id));
      // The split's transaction was confirmed with its buyer part refunded: released once paid.
      assert.equal(`${t.status}/${t.settlement_status}`, 'released/reversed');
    }
    const again = await call('POST', `/v1/test_helpers/payouts/${paid?.id}/reverse`);
    assert.equal(again.status, 409);
  });

  it('the books verify once the server has stopped', async () => {
    await served.server.stop();
    const result = await runCli(['ledger', 'verify'], served.db.env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^ledger sound: 4 transactions, \d+ journal rows checked\n$/);
  });
});
