import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { createPurchase, getPage, payByHelper, postForm, tablesContaining } from './helpers.ts';

/** The checkout page driven like a browser without scripts: GETs and plain form posts. */
describe('the checkout page', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  /** Delivers the simulated rail's callbacks (the phone's answer), as the worker would. */
  const deliverCallbacks = async () => {
    h.clock.advance(60);
    await runDueJobs(h.ctx);
  };
  const status = async (token: string) => json(await getPage(h, `/pay/${token}/status`));
  const attempts = async (id: string) =>
    (await h.ctx.db.query('SELECT 1 FROM payment_attempts WHERE transaction_id = $1', [id])).rowCount;
  const transaction = async (id: string) =>
    json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));

  it('shows the title, the amount with its currency, the seller and the protection terms, without an API key', async () => {
    const p = await createPurchase(h, {
      title: 'Road bike',
      amount: 25000,
      seller: { name: 'Kamau Cycles' },
    });
    const res = await h.request({
      method: 'GET',
      url: `/pay/${p.token}`,
      headers: { authorization: 'Bearer nope' },
      key: null,
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(res.body, /<h1 id="summary-title">Road bike<\/h1>/);
    assert.match(res.body, /KES\u00a025,000\.00/);
    assert.match(res.body, /<dt>Seller<\/dt><dd>Kamau Cycles<\/dd>/);
    assert.match(res.body, /held there\. It is <strong>not<\/strong> paid to Kamau Cycles/);
    assert.match(res.body, /3 days after Kamau Cycles marks it delivered/);
    assert.match(res.body, /contact Kamau Cycles before the review window ends/);
    assert.match(res.body, /action="\/pay\/[\w-]{43}\/mobile-money"/);
    assert.match(res.body, /action="\/pay\/[\w-]{43}\/card"/);
    assert.match(res.body, /<label for="phone">/);
    assert.match(res.body, /<main id="main"/);
    assert.match(res.body, /Test mode\./);
  });

  it("names the merchant as the seller when the transaction gives no seller name, and formats each currency's decimals", async () => {
    const merchant = await h.newMerchant({ name: 'Nairobi Gadgets Ltd' });
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: { amount: 250000, currency: 'UGX', title: 'Radio' },
    });
    const token = new URL(String(json(res).payment_link)).pathname.split('/').pop();
    const page = await getPage(h, `/pay/${token}`);
    assert.match(page.body, /<dd>Nairobi Gadgets Ltd<\/dd>/);
    assert.match(page.body, /UGX\u00a0250,000</);
  });

  it('states the time-based and delivery-confirmation conditions in plain words', async () => {
    const releaseAt = new Date(h.clock.now().getTime() + 10 * 86400_000);
    const timed = await createPurchase(h, {
      release_condition: { type: 'time_based', release_at: releaseAt.toISOString() },
    });
    const timedPage = (await getPage(h, `/pay/${timed.token}`)).body;
    assert.match(timedPage, /is paid on <strong>[^<]*UTC<\/strong>, or earlier if you confirm/);

    const onDelivery = await createPurchase(h, { release_condition: { type: 'delivery_confirmation' } });
    const deliveryPage = (await getPage(h, `/pay/${onDelivery.token}`)).body;
    assert.match(deliveryPage, /is paid once the delivery of your order is confirmed/);
  });

  it('escapes what the merchant wrote', async () => {
    const p = await createPurchase(h, {
      title: '<script>alert("x")</script> & "co"',
      seller: { name: "O'Brien <b>" },
    });
    const page = (await getPage(h, `/pay/${p.token}`)).body;
    assert.ok(!page.includes('<script>alert'));
    assert.ok(page.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;co&quot;'));
    assert.ok(page.includes('O&#39;Brien &lt;b&gt;'));
  });

  it('answers 404 with its own page for an unknown or malformed link', async () => {
    for (const token of ['A'.repeat(43), 'short', 'x'.repeat(44), '%3Cscript%3E']) {
      const res = await getPage(h, `/pay/${token}`);
      assert.equal(res.statusCode, 404, token);
      assert.match(res.body, /Payment link not found/);
      assert.match(String(res.headers['content-type']), /text\/html/);
    }
  });

  it('answers 410 with its own page for an expired link, while the purchase can still be paid through a new one', async () => {
    const p = await createPurchase(h);
    const link = json(
      await h.request({
        method: 'POST',
        url: '/v1/payment_links',
        payload: { service_transaction_id: p.id, expires_in_seconds: 60 },
      }),
    );
    const token = new URL(String(link.url)).pathname.split('/').pop() ?? '';
    assert.equal((await getPage(h, `/pay/${token}`)).statusCode, 200);
    h.clock.advance(61);
    const expired = await getPage(h, `/pay/${token}`);
    assert.equal(expired.statusCode, 410);
    assert.match(expired.body, /This payment link has expired/);
    assert.equal((await status(token)).state, 'expired');
    // An expired link cannot start a payment.
    const post = await postForm(h, `/pay/${token}/mobile-money`, { phone: '+254700000000' });
    assert.equal(post.statusCode, 303);
    assert.equal(await attempts(p.id), 0);
    // The transaction's own link still works.
    assert.equal((await getPage(h, `/pay/${p.token}`)).statusCode, 200);
  });

  it('answers 410 when the payment window ended and the purchase expired', async () => {
    const merchant = await h.newMerchant();
    const created = json(
      await h.request({
        method: 'POST',
        url: '/v1/transactions',
        key: merchant.test_key,
        payload: { amount: 10, title: 'Late' },
      }),
    );
    const token = new URL(String(created.payment_link)).pathname.split('/').pop();
    await h.request({
      method: 'POST',
      url: '/v1/test_helpers/clock/advance',
      key: merchant.test_key,
      payload: { seconds: 2 * 86400 },
    });
    const res = await getPage(h, `/pay/${token}`);
    assert.equal(res.statusCode, 410);
    assert.match(res.body, /This payment link has expired/);
  });

  it('answers 410 with its own page for a cancelled purchase', async () => {
    const p = await createPurchase(h);
    await h.request({ method: 'POST', url: `/v1/transactions/${p.id}/cancel` });
    const res = await getPage(h, `/pay/${p.token}`);
    assert.equal(res.statusCode, 410);
    assert.match(res.body, /This purchase was cancelled/);
  });

  it('shows a paid link as paid (200), with the protection terms and the review window', async () => {
    const p = await createPurchase(h, { satisfaction_days: 5, seller: { name: 'Wanjiru' } });
    await payByHelper(h, p.id, { method: 'card', card_number: '4242424242424242' });
    const res = await getPage(h, `/pay/${p.token}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1[^>]*>Paid<\/h1>/);
    assert.match(res.body, /is held safely by Safehold\. Wanjiru has not been paid yet/);
    assert.match(res.body, /<dt>Review window<\/dt><dd>5 days after delivery<\/dd>/);
    assert.match(res.body, /<dt>Paid with<\/dt><dd>Card ending 4242<\/dd>/);
    assert.ok(!res.body.includes('<form'), 'a paid link offers no payment form');

    await h.request({ method: 'POST', url: `/v1/transactions/${p.id}/deliver` });
    const delivered = await getPage(h, `/pay/${p.token}`);
    assert.match(delivered.body, /<dt>Review window<\/dt><dd>Ends [^<]+ UTC<\/dd>/);
    assert.match(delivered.body, /when your review window ends on <strong>/);
  });

  it('pays by mobile money with plain form posts: push, approve on the phone, then paid', async () => {
    const p = await createPurchase(h);
    const post = await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254 700 123 456' });
    assert.equal(post.statusCode, 303);
    assert.equal(post.headers.location, `/pay/${p.token}`);
    assert.equal(post.body, '');

    const waiting = await getPage(h, `/pay/${p.token}`);
    assert.equal(waiting.statusCode, 200);
    assert.match(waiting.body, /Approve the payment on your phone/);
    assert.match(waiting.body, /phone ending <strong>3456<\/strong>/);
    assert.match(waiting.body, /role="status" aria-live="polite"/);
    assert.match(waiting.body, new RegExp(`data-poll="/pay/${p.token}/status"`));
    assert.match(waiting.body, /<noscript><meta http-equiv="refresh" content="4"><\/noscript>/);
    assert.deepEqual(await status(p.token), {
      object: 'checkout_status',
      state: 'processing',
      attempt: { method: 'mobile_money', status: 'pending', failure_code: null, failure_message: null },
    });
    // A second push while the first is on the phone starts nothing.
    const again = await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254700123456' });
    assert.equal(again.statusCode, 303);
    assert.equal(await attempts(p.id), 1);

    await deliverCallbacks();
    assert.equal((await status(p.token)).state, 'paid');
    assert.match((await getPage(h, `/pay/${p.token}`)).body, /Mobile money, phone ending 3456/);
    const t = await transaction(p.id);
    assert.equal(t.status, 'reserved');
    assert.deepEqual(t.payment_method, { type: 'mobile_money', phone_last4: '3456' });
  });

  it('shows why a push failed and lets the buyer try again with another phone', async () => {
    const p = await createPurchase(h);
    await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254700001032' });
    await deliverCallbacks();
    const failed = await getPage(h, `/pay/${p.token}`);
    assert.equal(failed.statusCode, 200);
    assert.match(failed.body, /role="alert"/);
    assert.match(failed.body, /The payment did not go through/);
    assert.match(
      failed.body,
      /Phone ending 1032: The buyer cancelled the payment on the phone \(M-Pesa 1032\)\./,
    );
    assert.match(failed.body, /You have not been charged/);
    assert.match(failed.body, /action="[^"]+\/mobile-money"/);
    const s = await status(p.token);
    assert.equal(s.state, 'payable');
    assert.deepEqual(s.attempt, {
      method: 'mobile_money',
      status: 'failed',
      failure_code: 'cancelled_by_user',
      failure_message: 'The buyer cancelled the payment on the phone (M-Pesa 1032).',
    });

    await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254700000099' });
    await deliverCallbacks();
    assert.equal((await status(p.token)).state, 'paid');
    assert.equal((await transaction(p.id)).status, 'reserved');
  });

  it('pays by card, keeping only the last four digits: number, expiry and CVC are stored nowhere', async () => {
    const p = await createPurchase(h);
    const post = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4242 4242 4242 4242',
      expiry: '11/37',
      cvc: '7319',
    });
    assert.equal(post.statusCode, 303);
    assert.equal(post.headers.location, `/pay/${p.token}`);
    assert.match((await getPage(h, `/pay/${p.token}`)).body, /<h1[^>]*>Paid<\/h1>/);
    assert.equal((await transaction(p.id)).status, 'reserved');
    assert.deepEqual(await tablesContaining(h, '4242424242424242'), []);
    assert.deepEqual(await tablesContaining(h, '11/37'), []);
    assert.deepEqual(await tablesContaining(h, '7319'), []);
  });

  it('shows a declined card and keeps the purchase payable', async () => {
    const p = await createPurchase(h);
    const post = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4000000000000002',
      expiry: '01/30',
      cvc: '123',
    });
    assert.equal(post.statusCode, 303);
    const page = await getPage(h, `/pay/${p.token}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Card ending 0002: The card was declined\./);
    assert.match(page.body, /action="[^"]+\/card"/);
    assert.equal((await status(p.token)).state, 'payable');
    assert.equal((await transaction(p.id)).status, 'pending_payment');
  });

  it('takes the buyer through the test 3-D Secure challenge to a paid page', async () => {
    const p = await createPurchase(h);
    const post = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4000000000003220',
      expiry: '12/31',
      cvc: '123',
    });
    assert.equal(post.statusCode, 303);
    const location = String(post.headers.location);
    assert.match(location, new RegExp(`^/pay/${p.token}/challenge/pa_\\w+$`));
    assert.equal((await status(p.token)).state, 'requires_action');
    // Coming back to the checkout meanwhile leads to the challenge.
    const back = await getPage(h, `/pay/${p.token}`);
    assert.ok(back.body.includes(`href="${location}"`));

    const challenge = await getPage(h, location);
    assert.equal(challenge.statusCode, 200);
    assert.match(challenge.body, /<span class="badge">TEST<\/span>/);
    assert.match(challenge.body, /Test 3-D Secure check/);
    assert.match(challenge.body, /no bank is involved/);
    assert.match(challenge.body, /<dd>ending 3220<\/dd>/);
    assert.match(challenge.body, /name="outcome" value="approve"/);
    assert.match(challenge.body, /name="outcome" value="fail"/);

    const approved = await postForm(h, location, { outcome: 'approve' });
    assert.equal(approved.statusCode, 303);
    assert.equal(approved.headers.location, `/pay/${p.token}`);
    assert.match((await getPage(h, `/pay/${p.token}`)).body, /<h1[^>]*>Paid<\/h1>/);
    assert.equal((await transaction(p.id)).status, 'reserved');
    // The challenge is over: its page sends the buyer back, and a second answer changes nothing.
    assert.equal((await getPage(h, location)).statusCode, 303);
    assert.equal((await postForm(h, location, { outcome: 'fail' })).statusCode, 303);
    assert.equal((await transaction(p.id)).status, 'reserved');
  });

  it('a failed 3-D Secure challenge leaves the purchase payable and says why', async () => {
    const p = await createPurchase(h);
    const post = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4000000000003220',
      expiry: '12/31',
      cvc: '123',
    });
    const failed = await postForm(h, String(post.headers.location), { outcome: 'fail' });
    assert.equal(failed.statusCode, 303);
    const page = await getPage(h, `/pay/${p.token}`);
    assert.match(page.body, /3-D Secure authentication failed\./);
    assert.equal((await status(p.token)).state, 'payable');
    assert.equal((await transaction(p.id)).status, 'pending_payment');
  });

  it("does not open another purchase's challenge or an unknown attempt", async () => {
    const a = await createPurchase(h);
    const b = await createPurchase(h);
    const post = await postForm(h, `/pay/${a.token}/card`, {
      card_number: '4000000000003220',
      expiry: '12/31',
      cvc: '123',
    });
    const attemptId = String(post.headers.location).split('/').pop();
    const foreign = await getPage(h, `/pay/${b.token}/challenge/${attemptId}`);
    assert.equal(foreign.statusCode, 404);
    const answer = await postForm(h, `/pay/${b.token}/challenge/${attemptId}`, { outcome: 'approve' });
    assert.equal(answer.statusCode, 404);
    assert.equal((await transaction(a.id)).status, 'pending_payment');
    assert.equal((await getPage(h, `/pay/${a.token}/challenge/pa_unknown`)).statusCode, 404);
  });

  it('answers bad input with 400 and the form again, field errors tied to their inputs, and charges nothing', async () => {
    const p = await createPurchase(h);
    const phone = await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '0712 "345"' });
    assert.equal(phone.statusCode, 400);
    assert.match(phone.body, /Please check the payment details/);
    assert.match(
      phone.body,
      /aria-describedby="phone-hint phone-error" aria-invalid="true" value="0712 &quot;345&quot;"/,
    );
    assert.match(
      phone.body,
      /<p class="field-error" id="phone-error">Enter the number in international format/,
    );

    const card = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4242424242424242',
      expiry: '13/30',
      cvc: '12',
    });
    assert.equal(card.statusCode, 400);
    assert.match(card.body, /id="expiry-error">Enter the expiry date as MM\/YY/);
    assert.match(card.body, /id="cvc-error">Enter the 3 or 4 digit security code/);
    assert.ok(!card.body.includes('4242424242424242'), 'the card number is not echoed back');

    const empty = await postForm(h, `/pay/${p.token}/card`, {});
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /id="card_number-error"/);
    assert.equal(await attempts(p.id), 0);
  });

  it('does not take a second payment for a paid link', async () => {
    const p = await createPurchase(h);
    await payByHelper(h, p.id, { method: 'card', card_number: '4242424242424242' });
    const post = await postForm(h, `/pay/${p.token}/card`, {
      card_number: '4242424242424242',
      expiry: '11/37',
      cvc: '123',
    });
    assert.equal(post.statusCode, 303);
    assert.equal(post.headers.location, `/pay/${p.token}`);
    assert.equal(await attempts(p.id), 1);
  });

  it('in live mode shows no test banner or test numbers, and says so on the form when no live rail is configured', async () => {
    const merchant = await h.newMerchant({ verified: true });
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.live_key,
      payload: { amount: 100, title: 'Live item' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = String(json(res).service_transaction_id);
    const token = new URL(String(json(res).payment_link)).pathname.split('/').pop() ?? '';
    const page = await getPage(h, `/pay/${token}`);
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes('Test mode'));
    assert.ok(!page.body.includes('Test phone numbers'));
    const post = await postForm(h, `/pay/${token}/mobile-money`, { phone: '+254700000000' });
    assert.equal(post.statusCode, 400);
    assert.match(post.body, /No live payment rail is configured on this server/);
    assert.equal(await attempts(id), 0);
  });

  it('answers 401 authentication_failed in the error envelope for a bad token on the JSON status endpoint', async () => {
    for (const token of ['short', 'B'.repeat(43)]) {
      const res = await getPage(h, `/pay/${token}/status`);
      assert.equal(res.statusCode, 401, token);
      const body = json<{ error: Record<string, string> }>(res);
      assert.equal(body.error.code, 'authentication_failed');
      assert.equal(body.error.type, 'authentication_failed');
      assert.equal(body.error.request_id, res.headers['x-request-id']);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });
});
