import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { redactTokens } from '../../src/http/logger.ts';
import {
  collectionResultOf,
  MPESA_RESULT_FAILURES,
  parseStkCallback,
} from '../../src/rails/mpesa-callback.ts';
import { darajaPassword, darajaTimestamp } from '../../src/rails/mpesa-daraja.ts';
import { TEST_PHONE_OUTCOMES } from '../../src/rails/simulated-mobile-money.ts';

describe('Daraja time stamp and password', () => {
  it('writes the time in Nairobi (UTC+3), across midnight and a year end', () => {
    assert.equal(darajaTimestamp(new Date('2025-12-31T22:30:05Z')), '20260101013005');
    assert.equal(darajaTimestamp(new Date('2026-06-15T09:04:00.999Z')), '20260615120400');
  });

  it('is base64 of shortcode, passkey and time stamp', () => {
    assert.equal(darajaPassword('174379', 'pk', '20260101013005'), btoa('174379pk20260101013005'));
  });
});

describe("parsing Daraja's STK callback", () => {
  const success = {
    Body: {
      stkCallback: {
        MerchantRequestID: '29115-34620561-1',
        CheckoutRequestID: 'ws_CO_191220191020363925',
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: {
          Item: [
            { Name: 'Amount', Value: 1.0 },
            { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
            { Name: 'Balance' },
            { Name: 'TransactionDate', Value: 20191219102115 },
            { Name: 'PhoneNumber', Value: 254708374149 },
          ],
        },
      },
    },
  };

  it('reads a success with its receipt and amount, and maps it to a capture', () => {
    const callback = parseStkCallback(success);
    assert.deepEqual(callback, {
      merchantRequestId: '29115-34620561-1',
      checkoutRequestId: 'ws_CO_191220191020363925',
      resultCode: 0,
      resultDesc: 'The service request is processed successfully.',
      receipt: 'NLJ7RT61SV',
      amount: 1,
    });
    assert.deepEqual(callback && collectionResultOf(callback, 'pa_1'), {
      attemptId: 'pa_1',
      outcome: 'succeeded',
    });
  });

  it('reads a failure, with the result code as a number or a digit string', () => {
    for (const ResultCode of [1032, '1032']) {
      const callback = parseStkCallback({
        Body: {
          stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode, ResultDesc: 'x' },
        },
      });
      assert.equal(callback?.resultCode, 1032);
      assert.deepEqual(callback && collectionResultOf(callback, 'pa_1'), {
        attemptId: 'pa_1',
        outcome: 'failed',
        code: 'cancelled_by_user',
        message: 'The buyer cancelled the payment on the phone (M-Pesa 1032).',
      });
    }
  });

  it('gives other result codes rail_error with the description', () => {
    const callback = parseStkCallback({
      Body: {
        stkCallback: { CheckoutRequestID: 'c', ResultCode: 1001, ResultDesc: 'Unable to lock subscriber.' },
      },
    });
    assert.deepEqual(callback && collectionResultOf(callback, 'pa_1'), {
      attemptId: 'pa_1',
      outcome: 'failed',
      code: 'rail_error',
      message: 'Unable to lock subscriber (M-Pesa 1001).',
    });
  });

  it('refuses bodies that are not STK callbacks', () => {
    for (const body of [
      null,
      'text',
      [],
      {},
      { Body: {} },
      { Body: { stkCallback: { ResultCode: 0 } } },
      { Body: { stkCallback: { CheckoutRequestID: 'c' } } },
      { Body: { stkCallback: { CheckoutRequestID: 'c', ResultCode: 'zero' } } },
      { Body: { stkCallback: { CheckoutRequestID: '', ResultCode: 0 } } },
      { Body: { stkCallback: { CheckoutRequestID: 'c', ResultCode: 1.5 } } },
    ]) {
      assert.equal(parseStkCallback(body), undefined, JSON.stringify(body));
    }
  });

  it('uses the failure codes and words of the test simulator for the same M-Pesa codes', () => {
    for (const [digits, code] of [
      ['0001', 1],
      ['1032', 1032],
      ['2001', 2001],
    ] as const) {
      assert.deepEqual(MPESA_RESULT_FAILURES[code], TEST_PHONE_OUTCOMES[digits]);
    }
  });
});

describe('M-Pesa configuration', () => {
  const full = {
    MPESA_CONSUMER_KEY: 'k',
    MPESA_CONSUMER_SECRET: 's',
    MPESA_SHORTCODE: '174379',
    MPESA_PASSKEY: 'p',
  };

  it('is off without the variables, and on the sandbox by default with all four', () => {
    assert.equal(loadConfig({}).mpesa, undefined);
    assert.deepEqual(loadConfig(full).mpesa, {
      consumerKey: 'k',
      consumerSecret: 's',
      shortcode: '174379',
      passkey: 'p',
      baseUrl: 'https://sandbox.safaricom.co.ke',
    });
  });

  it('takes the production base URL and a callback base URL, without trailing slashes', () => {
    const config = loadConfig({
      ...full,
      MPESA_BASE_URL: 'https://api.safaricom.co.ke/',
      MPESA_CALLBACK_BASE_URL: 'https://callbacks.example.com/',
    }).mpesa;
    assert.equal(config?.baseUrl, 'https://api.safaricom.co.ke');
    assert.equal(config?.callbackBaseUrl, 'https://callbacks.example.com');
  });

  it('stops with the missing names when only some credentials are set, and never prints a secret', () => {
    assert.throws(
      () => loadConfig({ MPESA_CONSUMER_KEY: 'k', MPESA_CONSUMER_SECRET: 'very-secret' }),
      (error: Error) =>
        /missing MPESA_SHORTCODE, MPESA_PASSKEY/.test(error.message) &&
        !error.message.includes('very-secret'),
    );
    assert.throws(() => loadConfig({ ...full, MPESA_SHORTCODE: '17 43' }), /MPESA_SHORTCODE must be digits/);
    assert.throws(() => loadConfig({ ...full, MPESA_BASE_URL: 'sandbox' }), /MPESA_BASE_URL must be an http/);
  });
});

describe('request logs', () => {
  it("hide the M-Pesa callback's secret token", () => {
    assert.equal(redactTokens('/rails/mpesa/callback/abcDEF_123-x'), '/rails/mpesa/callback/[token]');
  });
});
