import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/domain/errors.ts';
import { buildNewTransaction, type NewTransactionContext } from '../../src/domain/new-transaction.ts';
import type { CreateTransactionInput } from '../../src/schemas/transaction.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const TEST: NewTransactionContext = { defaultCurrency: 'KES', livemode: false, now: NOW };
const LIVE: NewTransactionContext = { ...TEST, livemode: true };

function refused(input: CreateTransactionInput, param: string, message: RegExp, ctx = TEST): void {
  assert.throws(
    () => buildNewTransaction(input, ctx),
    (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.status, 400);
      assert.equal(error.param, param);
      assert.match(error.message, message);
      return true;
    },
  );
}

describe('buildNewTransaction', () => {
  it('fills the defaults: merchant currency, general vertical, buyer confirmation after 3 days', () => {
    const t = buildNewTransaction({ amount: 1500.5, title: 'Phone' }, TEST);
    assert.deepEqual(t, {
      merchantReference: null,
      merchantOrderId: null,
      amountMinor: 150050n,
      currency: 'KES',
      title: 'Phone',
      vertical: 'general',
      customer: null,
      seller: null,
      releaseCondition: { type: 'buyer_confirmation', review_window_days: 3, release_at: null },
      callbackUrl: null,
      metadata: {},
    });
  });

  it("uses the merchant's default currency and its exponent", () => {
    const t = buildNewTransaction(
      { amount: 25_000, title: 'Sack of maize' },
      { ...TEST, defaultCurrency: 'UGX' },
    );
    assert.equal(t.currency, 'UGX');
    assert.equal(t.amountMinor, 25_000n);
    refused({ amount: 1.5, title: 'x' }, 'amount', /whole number for UGX/, {
      ...TEST,
      defaultCurrency: 'UGX',
    });
  });

  it('refuses a default currency that is not supported instead of storing it', () => {
    refused({ amount: 1, title: 'x' }, 'currency', /not supported/, { ...TEST, defaultCurrency: 'BTC' });
  });

  it('merges the flat and the nested shape when both agree', () => {
    const t = buildNewTransaction(
      {
        amount: 10,
        title: 'x',
        seller_email: 's@example.com',
        satisfaction_days: 7,
        seller: { email: 's@example.com', name: 'Shop' },
        release_condition: { review_window_days: 7 },
      },
      TEST,
    );
    assert.deepEqual(t.seller, { merchant_id: null, email: 's@example.com', name: 'Shop' });
    assert.equal(t.releaseCondition.review_window_days, 7);
  });

  it('takes the flat seller_email and satisfaction_days alone', () => {
    const t = buildNewTransaction(
      { amount: 10, title: 'x', seller_email: 'a@example.com', satisfaction_days: 9 },
      TEST,
    );
    assert.deepEqual(t.seller, { merchant_id: null, email: 'a@example.com', name: null });
    assert.equal(t.releaseCondition.review_window_days, 9);
  });

  it('refuses the flat and nested forms of one field with different values', () => {
    refused(
      { amount: 10, title: 'x', seller_email: 'a@example.com', seller: { email: 'b@example.com' } },
      'seller_email',
      /seller_email and seller\.email .* must agree/,
    );
    refused(
      { amount: 10, title: 'x', satisfaction_days: 3, release_condition: { review_window_days: 4 } },
      'satisfaction_days',
      /satisfaction_days and release_condition\.review_window_days .* must agree/,
    );
  });

  it('requires a future release_at for time_based and refuses it for other types', () => {
    refused(
      { amount: 1, title: 'x', release_condition: { type: 'time_based' } },
      'release_condition.release_at',
      /required/,
    );
    refused(
      { amount: 1, title: 'x', release_condition: { type: 'time_based', release_at: NOW.toISOString() } },
      'release_condition.release_at',
      /in the future/,
    );
    refused(
      {
        amount: 1,
        title: 'x',
        release_condition: { type: 'delivery_confirmation', release_at: '2027-01-01T00:00:00Z' },
      },
      'release_condition.release_at',
      /only to time_based/,
    );
    const t = buildNewTransaction(
      {
        amount: 1,
        title: 'x',
        release_condition: { type: 'time_based', release_at: '2026-03-02T12:00:00+03:00' },
      },
      TEST,
    );
    assert.deepEqual(t.releaseCondition, {
      type: 'time_based',
      review_window_days: 3,
      release_at: '2026-03-02T09:00:00.000Z',
    });
  });

  it('refuses a release_at that the date-time format admits but no clock can read (a leap second)', () => {
    refused(
      {
        amount: 1,
        title: 'x',
        release_condition: { type: 'time_based', release_at: '2030-06-30T23:59:60Z' },
      },
      'release_condition.release_at',
      /valid date-time/,
    );
  });

  it('accepts https and http callback URLs in test mode, only https in live mode', () => {
    assert.equal(
      buildNewTransaction({ amount: 1, title: 'x', callback_url: 'http://example.com/h' }, TEST).callbackUrl,
      'http://example.com/h',
    );
    assert.equal(
      buildNewTransaction({ amount: 1, title: 'x', callback_url: 'https://example.com/h' }, LIVE).callbackUrl,
      'https://example.com/h',
    );
    refused(
      { amount: 1, title: 'x', callback_url: 'http://example.com/h' },
      'callback_url',
      /https in live mode/,
      LIVE,
    );
    refused({ amount: 1, title: 'x', callback_url: 'ftp://example.com/h' }, 'callback_url', /https/);
    refused(
      { amount: 1, title: 'x', callback_url: 'https://user:pw@example.com/h' },
      'callback_url',
      /credentials/,
    );
  });
});
