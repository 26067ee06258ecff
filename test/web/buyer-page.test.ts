import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { transactionMoney } from '../../src/store/ledger.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { buyerTokenFor, createPurchase, getPage, payByHelper, postForm } from './helpers.ts';

describe('the buyer page', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const transaction = async (id: string) =>
    json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));
  const paidPurchase = async (body: Record<string, unknown> = {}) => {
    const p = await createPurchase(h, { seller: { name: 'Mama Mboga' }, ...body });
    await payByHelper(h, p.id, { method: 'card', card_number: '4242424242424242' });
    return { ...p, buyer: await buyerTokenFor(h, p.id) };
  };

  it('answers 404 with its own page for an unknown or malformed buyer link', async () => {
    for (const token of ['C'.repeat(43), 'nope']) {
      const res = await getPage(h, `/buyer/${token}`);
      assert.equal(res.statusCode, 404);
      assert.match(res.body, /Buyer page not found/);
      const confirm = await postForm(h, `/buyer/${token}/confirm`);
      assert.equal(confirm.statusCode, 404);
      assert.match(confirm.body, /Buyer page not found/);
    }
  });

  it('before payment: says it waits for payment, links to the checkout and offers no confirmation', async () => {
    const p = await createPurchase(h);
    const buyer = await buyerTokenFor(h, p.id);
    const res = await getPage(h, `/buyer/${buyer}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<strong>Waiting for payment<\/strong>/);
    assert.ok(res.body.includes(`href="${p.paymentLink}"`));
    assert.ok(!res.body.includes('/confirm"'));
  });

  it('shows status, amount, title, seller, the review window, and the confirm button once paid', async () => {
    const p = await paidPurchase({ title: 'Sack of potatoes', amount: 3200, satisfaction_days: 4 });
    const res = await getPage(h, `/buyer/${p.buyer}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1 id="buyer-title">Sack of potatoes<\/h1>/);
    assert.match(res.body, /KES\u00a03,200\.00/);
    assert.match(res.body, /<dt>Status<\/dt><dd>Paid, held by Safehold<\/dd>/);
    assert.match(res.body, /<dt>Seller<\/dt><dd>Mama Mboga<\/dd>/);
    assert.match(res.body, /<dt>Review window<\/dt><dd>4 days after delivery<\/dd>/);
    assert.ok(res.body.includes(`action="/buyer/${p.buyer}/confirm"`));
    assert.match(res.body, /Confirm I received it/);

    await h.request({ method: 'POST', url: `/v1/transactions/${p.id}/deliver` });
    const delivered = await getPage(h, `/buyer/${p.buyer}`);
    assert.match(delivered.body, /<dt>Review window<\/dt><dd>Ends [^<]+ UTC<\/dd>/);
    assert.match(delivered.body, /Delivered: your money is still held/);
  });

  it('confirms receipt with a plain form post: 303 back, confirmed and approved for release, ledger moved', async () => {
    const p = await paidPurchase();
    const res = await postForm(h, `/buyer/${p.buyer}/confirm`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/buyer/${p.buyer}`);
    const page = await getPage(h, `/buyer/${p.buyer}`);
    assert.match(page.body, /Complete: the payment is released to the seller/);
    assert.ok(!page.body.includes('/confirm"'));
    const t = await transaction(p.id);
    assert.equal(t.status, 'confirmed');
    assert.equal(t.settlement_status, 'approved_for_release');
    const [money] = await transactionMoney(h.ctx.db, [p.id]);
    assert.equal(money?.approved_minor, 150050n);
    const events = await h.ctx.db.query<{ type: string }>(
      `SELECT type FROM events WHERE service_transaction_id = $1 AND type = 'transaction.status_changed'
        AND payload->>'status' = 'confirmed'`,
      [p.id],
    );
    assert.equal(events.rowCount, 1);
  });

  it('answers a second confirmation with 409 and a friendly message, changing nothing', async () => {
    const p = await paidPurchase();
    await postForm(h, `/buyer/${p.buyer}/confirm`);
    const again = await postForm(h, `/buyer/${p.buyer}/confirm`);
    assert.equal(again.statusCode, 409);
    assert.match(String(again.headers['content-type']), /text\/html/);
    assert.match(again.body, /Already confirmed/);
    const [money] = await transactionMoney(h.ctx.db, [p.id]);
    assert.equal(money?.approved_minor, 150050n);
  });

  it('answers 409 with the reason when the purchase cannot be confirmed (not paid yet)', async () => {
    const p = await createPurchase(h);
    const buyer = await buyerTokenFor(h, p.id);
    const res = await postForm(h, `/buyer/${buyer}/confirm`);
    assert.equal(res.statusCode, 409);
    assert.match(res.body, /This purchase cannot be confirmed now/);
    assert.match(res.body, /It has not been paid yet\./);
    assert.equal((await transaction(p.id)).status, 'pending_payment');
  });

  it('two confirmations at once: exactly one wins, the other gets 409, and the money moves once', async () => {
    const p = await paidPurchase();
    const results = await Promise.all([
      postForm(h, `/buyer/${p.buyer}/confirm`),
      postForm(h, `/buyer/${p.buyer}/confirm`),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [303, 409]);
    const [money] = await transactionMoney(h.ctx.db, [p.id]);
    assert.equal(money?.approved_minor, 150050n);
  });

  it('shows a cancelled purchase without a confirm button', async () => {
    const p = await createPurchase(h);
    const buyer = await buyerTokenFor(h, p.id);
    await h.request({ method: 'POST', url: `/v1/transactions/${p.id}/cancel` });
    const res = await getPage(h, `/buyer/${buyer}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<dt>Status<\/dt><dd>Cancelled<\/dd>/);
    assert.ok(!res.body.includes('/confirm"'));
  });
});
