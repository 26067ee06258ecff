import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import type { DarajaConfig } from '../../src/rails/mpesa-daraja.ts';
import { TEST_PHONE_OUTCOMES } from '../../src/rails/simulated-mobile-money.ts';
import { transactionMoney } from '../../src/store/ledger.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { tablesContaining } from '../web/helpers.ts';
import { CREDENTIALS, type FakeDaraja, type RecordedPush, startFakeDaraja } from './fake-daraja.ts';

/**
 * Live M-Pesa end to end over real sockets: the checkout page starts a push, the adapter talks
 * to a fake Daraja on 127.0.0.1:0, and the fake posts Daraja's callback to the service, which
 * listens on 127.0.0.1:0 too.
 */
describe('live M-Pesa through Daraja STK Push', () => {
  let h: Harness;
  let fake: FakeDaraja;
  let merchant: CreatedMerchant;
  let serviceUrl: string;
  // Computed here independently of the service: HMAC of 'mpesa-callback' under the harness secret.
  const callbackToken = createHmac('sha256', 'test-secret-for-link-tokens')
    .update('mpesa-callback')
    .digest('base64url');

  /** A fresh Daraja client (the service keeps one per configuration, with its token). */
  const configure = (extra: Partial<DarajaConfig> = {}) => {
    h.ctx.mpesa = { ...CREDENTIALS, baseUrl: fake.baseUrl, callbackBaseUrl: serviceUrl, ...extra };
  };

  before(async () => {
    h = await startHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    serviceUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    fake = await startFakeDaraja();
    merchant = await h.newMerchant({ verified: true });
    configure();
  });
  after(async () => {
    await fake.close();
    await h.close();
  });

  async function purchase(body: Record<string, unknown> = {}, key = merchant.live_key) {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key,
      payload: { amount: 1500, currency: 'KES', title: 'Used phone', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    const token = new URL(String(json(res).payment_link)).pathname.split('/').pop() ?? '';
    return { id: String(json(res).service_transaction_id), token };
  }

  async function payByPhone(token: string, phone = '+254712345678') {
    const res = await h.request({
      method: 'POST',
      url: `/pay/${token}/mobile-money`,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ phone }).toString(),
    });
    return res;
  }

  /** Pays a new live purchase by phone and returns the push Daraja received. */
  async function pushed(body: Record<string, unknown> = {}) {
    const p = await purchase(body);
    const before = fake.pushes.length;
    const res = await payByPhone(p.token);
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(fake.pushes.length, before + 1, 'one push reached Daraja');
    return { ...p, push: fake.pushes.at(-1) as RecordedPush };
  }

  const transaction = async (id: string, key = merchant.live_key) =>
    json(await h.request({ method: 'GET', url: `/v1/transactions/${id}`, key }));
  const attempt = async (id: string) =>
    (await transaction(id)).last_payment_attempt as Record<string, unknown>;
  const checkoutState = async (token: string) =>
    json(await h.request({ method: 'GET', url: `/pay/${token}/status`, key: null })).state;
  const captured = async (id: string) => (await transactionMoney(h.ctx.db, [id]))[0]?.captured_minor ?? 0n;
  const paidEvents = async (id: string) =>
    (
      await h.ctx.db.query(
        `SELECT 1 FROM events WHERE service_transaction_id = $1 AND type = 'transaction.paid'`,
        [id],
      )
    ).rowCount;
  const timeoutJob = async (attemptId: string) =>
    (
      await h.ctx.db.query<{ run_at: Date }>(
        `SELECT run_at FROM scheduled_jobs WHERE kind = 'payment_timeout' AND subject_id = $1`,
        [attemptId],
      )
    ).rows[0];
  const postCallback = (token: string, body: unknown) =>
    fetch(`${serviceUrl}/rails/mpesa/callback/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('sends Daraja the STK push it expects, then captures the payment when the callback says so', async () => {
    const now = h.clock.now();
    const { id, token, push } = await pushed();

    // Nairobi is UTC+3 all year: the time stamp and the Password computed without the service's code.
    const timestamp = new Date(now.getTime() + 3 * 3600_000).toISOString().replace(/\D/g, '').slice(0, 14);
    const attemptId = String((await attempt(id)).id);
    assert.equal(push.authorization, `Bearer ${fake.tokens.at(-1)}`);
    assert.deepEqual(push.body, {
      BusinessShortCode: '174379',
      Password: Buffer.from(`174379${CREDENTIALS.passkey}${timestamp}`).toString('base64'),
      Timestamp: timestamp,
      TransactionType: 'CustomerPayBillOnline',
      Amount: 1500,
      PartyA: '254712345678',
      PartyB: '174379',
      PhoneNumber: '254712345678',
      CallBackURL: `${serviceUrl}/rails/mpesa/callback/${callbackToken}`,
      AccountReference: attemptId.slice(-12),
      TransactionDesc: 'Used phone',
    });

    // The push is in flight: the attempt holds Daraja's CheckoutRequestID and waits 3 minutes.
    assert.equal((await attempt(id)).status, 'pending');
    const { rows } = await h.ctx.db.query<{ rail_reference: string }>(
      'SELECT rail_reference FROM payment_attempts WHERE id = $1',
      [attemptId],
    );
    assert.equal(rows[0]?.rail_reference, push.checkoutRequestId);
    assert.equal((await timeoutJob(attemptId))?.run_at.getTime(), now.getTime() + 180_000);
    assert.equal(await checkoutState(token), 'processing');

    const answer = await fake.callback(push, 0);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { ResultCode: 0, ResultDesc: 'Accepted' });

    const paid = await transaction(id);
    assert.equal(paid.status, 'reserved');
    assert.equal(paid.settlement_status, 'pending_confirmation');
    assert.deepEqual(paid.payment_method, { type: 'mobile_money', phone_last4: '5678' });
    assert.equal((paid.last_payment_attempt as Record<string, unknown>).status, 'succeeded');
    assert.equal(await captured(id), 150_000n);
    assert.equal(await timeoutJob(attemptId), undefined, 'the timeout is cancelled');
    assert.equal(await checkoutState(token), 'paid');
    await assertLedgerSound(h.ctx.db, merchant.merchant_id);
  });

  it('changes nothing when Daraja repeats a callback, or sends a different result afterwards', async () => {
    const { id, push } = await pushed();
    await fake.callback(push, 0);
    for (const code of [0, 0, 1032]) {
      const again = await fake.callback(push, code);
      assert.equal(again.status, 200);
      assert.deepEqual(JSON.parse(again.body), { ResultCode: 0, ResultDesc: 'Accepted' });
    }
    const t = await transaction(id);
    assert.equal(t.status, 'reserved');
    assert.equal((t.last_payment_attempt as Record<string, unknown>).status, 'succeeded');
    assert.equal(await captured(id), 150_000n, 'captured once');
    assert.equal(await paidEvents(id), 1);
    await assertLedgerSound(h.ctx.db, merchant.merchant_id);
  });

  const failures: [number, string, string][] = [
    [1, 'insufficient_funds', String((TEST_PHONE_OUTCOMES['0001'] as { message: string }).message)],
    [1032, 'cancelled_by_user', String((TEST_PHONE_OUTCOMES['1032'] as { message: string }).message)],
    [1037, 'timeout', 'The phone did not answer the payment request in time (M-Pesa 1037).'],
    [2001, 'wrong_pin', String((TEST_PHONE_OUTCOMES['2001'] as { message: string }).message)],
    [1025, 'rail_error', 'An error occurred while sending a push request (M-Pesa 1025).'],
  ];
  for (const [resultCode, failureCode, message] of failures) {
    it(`fails the attempt with ${failureCode} on result code ${resultCode} and leaves the transaction payable`, async () => {
      const { id, token, push } = await pushed();
      const answer = await fake.callback(push, resultCode, 'An error occurred while sending a push request.');
      assert.equal(answer.status, 200);
      const t = await transaction(id);
      assert.equal(t.status, 'pending_payment');
      assert.equal(t.payment_method, null);
      const last = t.last_payment_attempt as Record<string, unknown>;
      assert.equal(last.status, 'failed');
      assert.equal(last.failure_code, failureCode);
      assert.equal(last.failure_message, message);
      assert.equal(await captured(id), 0n);
      assert.equal(await checkoutState(token), 'payable');
    });
  }

  it('takes a second push after a cancelled one, and captures that one', async () => {
    const { id, token, push } = await pushed();
    await fake.callback(push, 1032, 'Request cancelled by user');
    assert.equal((await payByPhone(token, '+254700111222')).statusCode, 303);
    const retry = fake.pushes.at(-1) as RecordedPush;
    assert.notEqual(retry.checkoutRequestId, push.checkoutRequestId);
    assert.equal(retry.body.PhoneNumber, '254700111222');
    await fake.callback(retry, 0);
    const t = await transaction(id);
    assert.equal(t.status, 'reserved');
    assert.deepEqual(t.payment_method, { type: 'mobile_money', phone_last4: '1222' });
  });

  it('answers 404 to a callback with a wrong token, before reading it, and changes nothing', async () => {
    const { id, push } = await pushed();
    const body = {
      Body: {
        stkCallback: {
          MerchantRequestID: '1',
          CheckoutRequestID: push.checkoutRequestId,
          ResultCode: 0,
          ResultDesc: 'ok',
        },
      },
    };
    const wrong = createHmac('sha256', 'another-secret').update('mpesa-callback').digest('base64url');
    for (const token of [wrong, 'short', callbackToken.slice(0, -1)]) {
      const res = await postCallback(token, body);
      assert.equal(res.status, 404, token);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'not_found');
    }
    assert.equal((await postCallback(wrong, '{not json')).status, 404);
    assert.equal((await attempt(id)).status, 'pending');
    assert.equal((await transaction(id)).status, 'pending_payment');
    // The real callback still works afterwards.
    await fake.callback(push, 0);
    assert.equal((await transaction(id)).status, 'reserved');
  });

  it('answers 400 to a body that is not an STK callback, and accepts one for an unknown push without effect', async () => {
    const bad = await postCallback(callbackToken, { Body: { somethingElse: true } });
    assert.equal(bad.status, 400);
    const unknown = await postCallback(callbackToken, {
      Body: { stkCallback: { CheckoutRequestID: 'ws_CO_unknown', ResultCode: 0, ResultDesc: 'ok' } },
    });
    assert.equal(unknown.status, 200);
    assert.deepEqual(await unknown.json(), { ResultCode: 0, ResultDesc: 'Accepted' });
  });

  it('never applies a Daraja callback to a test-mode attempt', async () => {
    const test = await purchase({}, merchant.test_key);
    // Phone …1037: the simulator never calls back, so the test attempt stays in flight.
    assert.equal((await payByPhone(test.token, '+254700001037')).statusCode, 303);
    const { rows } = await h.ctx.db.query<{ rail_reference: string }>(
      'SELECT rail_reference FROM payment_attempts WHERE transaction_id = $1',
      [test.id],
    );
    const reference = String(rows[0]?.rail_reference);
    const res = await postCallback(callbackToken, {
      Body: { stkCallback: { CheckoutRequestID: reference, ResultCode: 0, ResultDesc: 'ok' } },
    });
    assert.equal(res.status, 200);
    const t = await transaction(test.id, merchant.test_key);
    assert.equal(t.status, 'pending_payment');
    assert.equal((t.last_payment_attempt as Record<string, unknown>).status, 'pending');
  });

  it("fails the attempt with Daraja's own message when Daraja refuses the push", async () => {
    fake.replies.push({
      status: 400,
      body: {
        requestId: '1',
        errorCode: '400.002.02',
        errorMessage: 'Bad Request - Invalid BusinessShortCode',
      },
    });
    const { id, token } = await pushed();
    const last = await attempt(id);
    assert.equal(last.status, 'failed');
    assert.equal(last.failure_code, 'rail_error');
    assert.equal(
      last.failure_message,
      'M-Pesa refused the payment request: Bad Request - Invalid BusinessShortCode (400.002.02).',
    );
    assert.equal(await timeoutJob(String(last.id)), undefined);
    assert.equal(await checkoutState(token), 'payable');
    const page = await h.request({ method: 'GET', url: `/pay/${token}`, key: null });
    assert.match(page.body, /Invalid BusinessShortCode/);
  });

  it('fails the attempt, without calling Daraja, for a fractional or non-KES amount or a non-Kenyan phone', async () => {
    const cases: [Record<string, unknown>, string, string, string][] = [
      [{ amount: 1500.5 }, '+254712345678', 'amount_not_supported', 'whole shillings'],
      [{ currency: 'TZS' }, '+254712345678', 'currency_not_supported', 'in TZS'],
      [{}, '+255712345678', 'invalid_phone', 'Kenyan phone numbers'],
    ];
    const tokensBefore = fake.tokens.length;
    const pushesBefore = fake.pushes.length;
    for (const [body, phone, code, words] of cases) {
      const p = await purchase(body);
      assert.equal((await payByPhone(p.token, phone)).statusCode, 303);
      const last = await attempt(p.id);
      assert.equal(last.status, 'failed');
      assert.equal(last.failure_code, code);
      assert.match(String(last.failure_message), new RegExp(words));
    }
    assert.equal(fake.pushes.length, pushesBefore);
    assert.equal(fake.tokens.length, tokensBefore);
  });

  it('reuses its access token until shortly before it expires, and replaces one Daraja rejects', async () => {
    configure();
    const start = fake.tokens.length;
    const [a, b] = await Promise.all([purchase(), purchase()]);
    // Two pushes at once share one token request.
    await Promise.all([payByPhone(a.token), payByPhone(b.token)]);
    assert.equal(fake.tokens.length, start + 1);
    await pushed();
    assert.equal(fake.tokens.length, start + 1);
    assert.equal(fake.pushes.at(-1)?.authorization, `Bearer ${fake.tokens[start]}`);

    // Daraja's token lives 3599 s; the adapter renews it a minute early.
    h.clock.advance(3599 - 61);
    await pushed();
    assert.equal(fake.tokens.length, start + 1);
    h.clock.advance(2);
    await pushed();
    assert.equal(fake.tokens.length, start + 2);
    assert.equal(fake.pushes.at(-1)?.authorization, `Bearer ${fake.tokens[start + 1]}`);

    // A token Daraja no longer accepts is dropped and the push retried once with a new one.
    fake.replies.push({ revokeTokens: true });
    const { id } = await pushed();
    assert.equal(fake.tokens.length, start + 3);
    assert.equal(fake.pushes.at(-1)?.authorization, `Bearer ${fake.tokens[start + 2]}`);
    assert.equal((await attempt(id)).status, 'pending');
  });

  it('fails the attempt when Daraja refuses the credentials, and keeps the secrets out of messages and tables', async () => {
    configure({ consumerSecret: 'wrong-secret-7d1e' });
    const p = await purchase();
    assert.equal((await payByPhone(p.token)).statusCode, 303);
    const last = await attempt(p.id);
    assert.equal(last.failure_code, 'rail_error');
    assert.equal(
      last.failure_message,
      "M-Pesa refused the service's credentials: Invalid Authentication passed (400.008.01).",
    );
    configure();
    for (const secret of ['wrong-secret-7d1e', CREDENTIALS.consumerSecret, CREDENTIALS.passkey]) {
      assert.deepEqual(await tablesContaining(h, secret), [], secret);
    }
  });

  it('fails the attempt when Daraja does not answer the push in time', async () => {
    configure({ requestTimeoutMs: 200 });
    fake.replies.push('hang');
    const p = await purchase();
    assert.equal((await payByPhone(p.token)).statusCode, 303);
    const last = await attempt(p.id);
    assert.equal(last.status, 'failed');
    assert.equal(last.failure_message, 'M-Pesa did not answer in time. Try again in a moment.');
    configure();
  });

  it('refuses live cards with Daraja configured: no card processor exists', async () => {
    const p = await purchase();
    const res = await h.request({
      method: 'POST',
      url: `/pay/${p.token}/card`,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        card_number: '4242424242424242',
        expiry: '12/30',
        cvc: '123',
      }).toString(),
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /Card payments are not available in live mode yet; pay by M-Pesa/);
    assert.equal((await transaction(p.id)).last_payment_attempt, null);
  });
});
