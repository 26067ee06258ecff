import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

/** A valid body the cases below spoil one field at a time. */
const BASE = { amount: 100, title: 'Used phone' } as const;
const FUTURE = '2099-01-01T00:00:00.000Z';

interface ErrorBody {
  error: { code: string; message: string; request_id: string; type: string; param?: string };
}

interface Case {
  name: string;
  body: unknown;
  /** undefined: the error names no field (the body as a whole is wrong). */
  param: string | undefined;
  message: RegExp;
}

let h: Harness;

function post(body: unknown, key?: string): Promise<LightMyRequestResponse> {
  return h.request({
    method: 'POST',
    url: '/v1/transactions',
    key,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

function assertInvalid(res: LightMyRequestResponse, param: string | undefined, message: RegExp): void {
  assert.equal(res.statusCode, 400, res.body);
  const { error } = json<ErrorBody>(res);
  assert.equal(error.code, 'invalid_request');
  assert.equal(error.type, 'invalid_request');
  assert.equal(error.param, param);
  assert.match(error.message, message);
  assert.equal(error.request_id, res.headers['x-request-id']);
}

const metadataOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

const CASES: Case[] = [
  // amount
  { name: 'amount missing', body: { title: 'x' }, param: 'amount', message: /^amount is required\.$/ },
  {
    name: 'amount as a string',
    body: { ...BASE, amount: '100' },
    param: 'amount',
    message: /amount must be of type number/,
  },
  { name: 'amount 0', body: { ...BASE, amount: 0 }, param: 'amount', message: /amount must be > 0/ },
  { name: 'amount negative', body: { ...BASE, amount: -5 }, param: 'amount', message: /amount must be > 0/ },
  {
    name: 'amount above 1e9',
    body: { ...BASE, amount: 1_000_000_000.01 },
    param: 'amount',
    message: /amount must be <= 1000000000/,
  },
  {
    name: 'amount with 3 decimals in KES',
    body: { ...BASE, amount: 10.005 },
    param: 'amount',
    message: /^amount has more than 2 decimal places for KES\.$/,
  },
  {
    name: 'amount with float noise in KES',
    body: { ...BASE, amount: 0.1 + 0.2 },
    param: 'amount',
    message: /more than 2 decimal places for KES/,
  },
  {
    name: 'amount with decimals in UGX',
    body: { ...BASE, amount: 100.5, currency: 'UGX' },
    param: 'amount',
    message: /^amount must be a whole number for UGX\.$/,
  },
  // title
  { name: 'title missing', body: { amount: 1 }, param: 'title', message: /^title is required\.$/ },
  {
    name: 'title empty',
    body: { ...BASE, title: '' },
    param: 'title',
    message: /title must NOT have fewer than 1 characters/,
  },
  {
    name: 'title of 201 characters',
    body: { ...BASE, title: 'x'.repeat(201) },
    param: 'title',
    message: /title must NOT have more than 200 characters/,
  },
  {
    name: 'title with a control character',
    body: { ...BASE, title: 'bell\u0007' },
    param: 'title',
    message: /^title must not contain control characters\.$/,
  },
  {
    name: 'title with a newline',
    body: { ...BASE, title: 'two\nlines' },
    param: 'title',
    message: /control characters/,
  },
  {
    name: 'title with NUL',
    body: { ...BASE, title: 'a\u0000b' },
    param: 'title',
    message: /control characters/,
  },
  {
    name: 'title with an unpaired surrogate',
    body: { ...BASE, title: 'a\ud800' },
    param: 'title',
    message: /control characters/,
  },
  // currency and vertical
  {
    name: 'currency in lowercase',
    body: { ...BASE, currency: 'kes' },
    param: 'currency',
    message: /^currency must be one of: KES, UGX, TZS/,
  },
  {
    name: 'currency unknown',
    body: { ...BASE, currency: 'BTC' },
    param: 'currency',
    message: /currency must be one of/,
  },
  {
    name: 'vertical unknown',
    body: { ...BASE, vertical: 'toys' },
    param: 'vertical',
    message: /^vertical must be one of: general, electronics/,
  },
  // review window, both shapes
  {
    name: 'satisfaction_days 0',
    body: { ...BASE, satisfaction_days: 0 },
    param: 'satisfaction_days',
    message: /must be >= 1/,
  },
  {
    name: 'satisfaction_days 31',
    body: { ...BASE, satisfaction_days: 31 },
    param: 'satisfaction_days',
    message: /must be <= 30/,
  },
  {
    name: 'satisfaction_days 2.5',
    body: { ...BASE, satisfaction_days: 2.5 },
    param: 'satisfaction_days',
    message: /must be of type integer/,
  },
  {
    name: 'review_window_days 0',
    body: { ...BASE, release_condition: { review_window_days: 0 } },
    param: 'release_condition.review_window_days',
    message: /must be >= 1/,
  },
  {
    name: 'review_window_days 31',
    body: { ...BASE, release_condition: { review_window_days: 31 } },
    param: 'release_condition.review_window_days',
    message: /must be <= 30/,
  },
  {
    name: 'review_window_days 2.5',
    body: { ...BASE, release_condition: { review_window_days: 2.5 } },
    param: 'release_condition.review_window_days',
    message: /must be of type integer/,
  },
  {
    name: 'seller_email and seller.email that differ',
    body: { ...BASE, seller_email: 'a@example.com', seller: { email: 'b@example.com' } },
    param: 'seller_email',
    message: /^seller_email and seller\.email are the same field in two shapes and must agree\.$/,
  },
  {
    name: 'satisfaction_days and release_condition.review_window_days that differ',
    body: { ...BASE, satisfaction_days: 5, release_condition: { review_window_days: 6 } },
    param: 'satisfaction_days',
    message: /satisfaction_days and release_condition\.review_window_days .* must agree/,
  },
  // release condition
  {
    name: 'release_condition.type unknown',
    body: { ...BASE, release_condition: { type: 'on_sunday' } },
    param: 'release_condition.type',
    message: /must be one of: buyer_confirmation, delivery_confirmation, time_based/,
  },
  {
    name: 'time_based without release_at',
    body: { ...BASE, release_condition: { type: 'time_based' } },
    param: 'release_condition.release_at',
    message: /required for time_based/,
  },
  {
    name: 'time_based with a past release_at',
    body: { ...BASE, release_condition: { type: 'time_based', release_at: '2020-01-01T00:00:00Z' } },
    param: 'release_condition.release_at',
    message: /must be in the future/,
  },
  {
    name: 'time_based with a release_at that is not a date-time',
    body: { ...BASE, release_condition: { type: 'time_based', release_at: 'next week' } },
    param: 'release_condition.release_at',
    message: /must be a valid date-time/,
  },
  {
    name: 'time_based with a leap-second release_at',
    body: { ...BASE, release_condition: { type: 'time_based', release_at: '2098-12-31T23:59:60Z' } },
    param: 'release_condition.release_at',
    message: /must be a valid date-time/,
  },
  {
    name: 'release_at on buyer_confirmation',
    body: { ...BASE, release_condition: { type: 'buyer_confirmation', release_at: FUTURE } },
    param: 'release_condition.release_at',
    message: /applies only to time_based/,
  },
  {
    name: 'release_at with the default type',
    body: { ...BASE, release_condition: { release_at: FUTURE } },
    param: 'release_condition.release_at',
    message: /applies only to time_based/,
  },
  // customer, seller, e-mails
  {
    name: 'customer.phone without +',
    body: { ...BASE, customer: { phone: '0712345678' } },
    param: 'customer.phone',
    message: /customer\.phone is not valid \(E\.164/,
  },
  {
    name: 'customer.phone too short',
    body: { ...BASE, customer: { phone: '+2547' } },
    param: 'customer.phone',
    message: /E\.164/,
  },
  {
    name: 'customer.phone with spaces',
    body: { ...BASE, customer: { phone: '+254 712 345 678' } },
    param: 'customer.phone',
    message: /E\.164/,
  },
  {
    name: 'customer.phone of 16 digits',
    body: { ...BASE, customer: { phone: '+1234567890123456' } },
    param: 'customer.phone',
    message: /E\.164/,
  },
  {
    name: 'customer.email without a domain',
    body: { ...BASE, customer: { email: 'buyer@' } },
    param: 'customer.email',
    message: /^customer\.email must be a valid email\.$/,
  },
  {
    name: 'customer.email without @',
    body: { ...BASE, customer: { email: 'buyer.example.com' } },
    param: 'customer.email',
    message: /valid email/,
  },
  {
    name: 'seller_email invalid',
    body: { ...BASE, seller_email: 'not an email' },
    param: 'seller_email',
    message: /valid email/,
  },
  {
    name: 'seller.email invalid',
    body: { ...BASE, seller: { email: '@example.com' } },
    param: 'seller.email',
    message: /valid email/,
  },
  {
    name: 'customer.name with a control character',
    body: { ...BASE, customer: { name: 'Ann\u001b[31m' } },
    param: 'customer.name',
    message: /control characters/,
  },
  // callback_url (test mode)
  {
    name: 'callback_url relative',
    body: { ...BASE, callback_url: '/hooks/safehold' },
    param: 'callback_url',
    message: /callback_url must be a valid uri/,
  },
  {
    name: 'callback_url with ftp',
    body: { ...BASE, callback_url: 'ftp://example.com/hook' },
    param: 'callback_url',
    message: /^callback_url must use https \(or http in test mode\)\.$/,
  },
  {
    name: 'callback_url with javascript:',
    body: { ...BASE, callback_url: 'javascript:alert(1)' },
    param: 'callback_url',
    message: /must use https/,
  },
  {
    name: 'callback_url with credentials',
    body: { ...BASE, callback_url: 'https://u:p@example.com/hook' },
    param: 'callback_url',
    message: /credentials/,
  },
  // references and metadata
  {
    name: 'merchant_reference of 129 characters',
    body: { ...BASE, merchant_reference: 'r'.repeat(129) },
    param: 'merchant_reference',
    message: /more than 128 characters/,
  },
  {
    name: 'merchant_reference empty',
    body: { ...BASE, merchant_reference: '' },
    param: 'merchant_reference',
    message: /fewer than 1 characters/,
  },
  {
    name: 'merchant_order_id of 129 characters',
    body: { ...BASE, merchant_order_id: 'o'.repeat(129) },
    param: 'merchant_order_id',
    message: /more than 128 characters/,
  },
  {
    name: 'merchant_order_id with a tab',
    body: { ...BASE, merchant_order_id: 'a\tb' },
    param: 'merchant_order_id',
    message: /control characters/,
  },
  {
    name: 'metadata with 51 keys',
    body: { ...BASE, metadata: metadataOf(51) },
    param: 'metadata',
    message: /more than 50 properties/,
  },
  {
    name: 'metadata with a 41-character key',
    body: { ...BASE, metadata: { ['k'.repeat(41)]: 'v' } },
    param: 'metadata',
    message: /more than 40 characters/,
  },
  {
    name: 'metadata with an empty key',
    body: { ...BASE, metadata: { '': 'v' } },
    param: 'metadata',
    message: /fewer than 1 characters/,
  },
  {
    name: 'metadata with a NUL in a key',
    body: { ...BASE, metadata: { 'a\u0000': 'v' } },
    param: 'metadata',
    message: /control characters/,
  },
  {
    name: 'metadata with a 501-character value',
    body: { ...BASE, metadata: { note: 'v'.repeat(501) } },
    param: 'metadata.note',
    message: /more than 500 characters/,
  },
  {
    name: 'metadata with a number value',
    body: { ...BASE, metadata: { count: 3 } },
    param: 'metadata.count',
    message: /^metadata\.count must be of type string\.$/,
  },
  {
    name: 'metadata with a null value',
    body: { ...BASE, metadata: { gone: null } },
    param: 'metadata.gone',
    message: /must be of type string/,
  },
  {
    name: 'metadata with a nested object',
    body: { ...BASE, metadata: { deep: { a: '1' } } },
    param: 'metadata.deep',
    message: /must be of type string/,
  },
  {
    name: 'metadata with a NUL in a value',
    body: { ...BASE, metadata: { note: 'a\u0000b' } },
    param: 'metadata.note',
    message: /NUL/,
  },
  {
    name: 'metadata with an unpaired surrogate in a value',
    body: { ...BASE, metadata: { note: '\udc00' } },
    param: 'metadata.note',
    message: /unpaired surrogate/,
  },
  {
    name: 'metadata as an array',
    body: { ...BASE, metadata: ['a'] },
    param: 'metadata',
    message: /must be of type object/,
  },
  // idempotency key in the body
  {
    name: 'idempotency_key empty',
    body: { ...BASE, idempotency_key: '' },
    param: 'idempotency_key',
    message: /fewer than 1 characters/,
  },
  {
    name: 'idempotency_key of 256 characters',
    body: { ...BASE, idempotency_key: 'k'.repeat(256) },
    param: 'idempotency_key',
    message: /more than 255 characters/,
  },
  {
    name: 'idempotency_key with NUL',
    body: { ...BASE, idempotency_key: 'k\u0000' },
    param: 'idempotency_key',
    message: /control characters/,
  },
  // unknown fields and the body as a whole
  {
    name: 'an unknown top-level field',
    body: { ...BASE, colour: 'red' },
    param: 'colour',
    message: /^Unknown field 'colour'\.$/,
  },
  {
    name: 'an unknown customer field',
    body: { ...BASE, customer: { foo: 'x' } },
    param: 'customer.foo',
    message: /^Unknown field 'customer\.foo'\.$/,
  },
  {
    name: 'an unknown seller field',
    body: { ...BASE, seller: { phone: '+254700000000' } },
    param: 'seller.phone',
    message: /Unknown field 'seller\.phone'/,
  },
  {
    name: 'an unknown release_condition field',
    body: { ...BASE, release_condition: { days: 3 } },
    param: 'release_condition.days',
    message: /Unknown field 'release_condition\.days'/,
  },
  {
    name: 'a body that is an array',
    body: [BASE],
    param: undefined,
    message: /^The request body must be a JSON object\.$/,
  },
  {
    name: 'a body that is a string',
    body: 'amount=100',
    param: undefined,
    message: /^The request body must be a JSON object\.$/,
  },
  { name: 'a body that is a number', body: 100, param: undefined, message: /must be a JSON object/ },
  { name: 'a body that is null', body: null, param: undefined, message: /must be a JSON object/ },
];

/** One wrong JSON type for every field, top level and nested (enums answer with their values). */
const WRONG_TYPES: Array<[string, unknown, string]> = [
  ['amount', true, 'number'],
  ['amount', null, 'number'],
  ['amount', [100], 'number'],
  ['amount', { value: 100 }, 'number'],
  ['title', 42, 'string'],
  ['title', null, 'string'],
  ['currency', 404, 'one of'],
  ['merchant_reference', 12345, 'string'],
  ['merchant_order_id', false, 'string'],
  ['vertical', ['general'], 'one of'],
  ['satisfaction_days', '3', 'integer'],
  ['seller_email', 7, 'string'],
  ['customer', 'Ann', 'object'],
  ['customer', null, 'object'],
  ['customer', [], 'object'],
  ['customer.name', 1, 'string'],
  ['customer.phone', 254712345678, 'string'],
  ['customer.email', {}, 'string'],
  ['seller', 1, 'object'],
  ['seller.merchant_id', 99, 'string'],
  ['seller.email', null, 'string'],
  ['seller.name', ['Shop'], 'string'],
  ['release_condition', 'time_based', 'object'],
  ['release_condition.type', 1, 'one of'],
  ['release_condition.review_window_days', '7', 'integer'],
  ['release_condition.release_at', 1_900_000_000, 'string'],
  ['callback_url', { url: 'https://example.com' }, 'string'],
  ['metadata', 'x=1', 'object'],
  ['idempotency_key', 5, 'string'],
];

function withField(path: string, value: unknown): Record<string, unknown> {
  const [head, child] = path.split('.') as [string, string | undefined];
  if (child === undefined) return { ...BASE, [head]: value };
  return { ...BASE, [head]: { [child]: value } };
}

describe('POST /v1/transactions validation', () => {
  let live: CreatedMerchant;

  before(async () => {
    h = await startHarness();
    live = await h.newMerchant({ verified: true });
  });
  after(() => h.close());

  it('accepts the base body the cases below spoil', async () => {
    const res = await post(BASE);
    assert.equal(res.statusCode, 201, res.body);
  });

  for (const c of CASES) {
    it(`refuses ${c.name} with 400 naming ${c.param ?? 'no field'}`, async () => {
      assertInvalid(await post(c.body), c.param, c.message);
    });
  }

  for (const [path, value, type] of WRONG_TYPES) {
    it(`refuses ${path} given as ${JSON.stringify(value)} with 400 naming ${path}`, async () => {
      assertInvalid(
        await post(withField(path, value)),
        path,
        new RegExp(
          `^${path.replaceAll('.', '\\.')} must be ${type === 'one of' ? 'one of: ' : `of type ${type}\\.$`}`,
        ),
      );
    });
  }

  it('makes nothing when a request is refused', async () => {
    const merchant = await h.newMerchant();
    for (const c of CASES.slice(0, 10)) await post(c.body, merchant.test_key);
    const { rows } = await h.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM transactions WHERE merchant_id = $1',
      [merchant.merchant_id],
    );
    assert.equal(rows[0]?.n, 0);
  });

  describe('values that are accepted', () => {
    it("defaults currency to the merchant's default, KES", async () => {
      const res = await post({ amount: 1500.5, title: 'Phone' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(json(res).currency, 'KES');
      assert.equal(json(res).amount_minor, 150050);
    });

    it('takes a given currency, UGX in whole numbers with no minor unit', async () => {
      const res = await post({ amount: 250000, title: 'Goat', currency: 'UGX' });
      assert.equal(res.statusCode, 201, res.body);
      const t = json(res);
      assert.equal(t.currency, 'UGX');
      assert.equal(t.amount, 250000);
      assert.equal(t.amount_minor, 250000);
    });

    it('takes amount at the bounds: 0.01 and 1,000,000,000', async () => {
      const low = await post({ ...BASE, amount: 0.01 });
      const high = await post({ ...BASE, amount: 1_000_000_000 });
      assert.equal(low.statusCode, 201, low.body);
      assert.equal(json(low).amount_minor, 1);
      assert.equal(high.statusCode, 201, high.body);
      assert.equal(json(high).amount_minor, 100_000_000_000);
    });

    it('takes a title of exactly 200 characters, counted as characters not UTF-16 units', async () => {
      const res = await post({ ...BASE, title: '📱'.repeat(200) });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(json(res).title, '📱'.repeat(200));
    });

    it('takes review windows of 1 and 30 days', async () => {
      const one = await post({ ...BASE, satisfaction_days: 1 });
      const thirty = await post({ ...BASE, release_condition: { review_window_days: 30 } });
      assert.equal(
        json<{ release_condition: { review_window_days: number } }>(one).release_condition.review_window_days,
        1,
      );
      assert.equal(
        json<{ release_condition: { review_window_days: number } }>(thirty).release_condition
          .review_window_days,
        30,
      );
    });

    it('takes the flat and nested forms of the same field when they agree', async () => {
      const res = await post({
        ...BASE,
        seller_email: 's@example.com',
        seller: { email: 's@example.com' },
        satisfaction_days: 4,
        release_condition: { review_window_days: 4 },
      });
      assert.equal(res.statusCode, 201, res.body);
      const t = json<{ seller: { email: string }; release_condition: { review_window_days: number } }>(res);
      assert.equal(t.seller.email, 's@example.com');
      assert.equal(t.release_condition.review_window_days, 4);
    });

    it('takes metadata with 50 keys, 40-character keys and 500-character values', async () => {
      const metadata = { ...metadataOf(49), ['k'.repeat(40)]: 'v'.repeat(500) };
      const res = await post({ ...BASE, metadata });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(json(res).metadata, metadata);
    });

    it('takes metadata values with newlines and non-Latin text', async () => {
      const metadata = { note: 'line one\nline two', name: 'Wanjiků 日本 🙂' };
      const res = await post({ ...BASE, metadata });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(json(res).metadata, metadata);
    });

    it('takes a merchant_reference of 128 characters and an E.164 phone', async () => {
      const res = await post({
        ...BASE,
        merchant_reference: 'r'.repeat(128),
        customer: { phone: '+254712345678' },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(json(res).merchant_reference, 'r'.repeat(128));
    });

    it('takes an http callback_url in test mode', async () => {
      const res = await post({ ...BASE, callback_url: 'http://127.0.0.1:8080/hook' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(json(res).callback_url, 'http://127.0.0.1:8080/hook');
    });
  });

  describe('callback_url in live mode', () => {
    const liveCases: Array<[string, string, RegExp]> = [
      ['http', 'http://93.184.215.14/hook', /^callback_url must use https in live mode\.$/],
      ['loopback 127.0.0.1', 'https://127.0.0.1/hook', /public address in live mode/],
      ['private 10.x', 'https://10.1.2.3/hook', /public address in live mode/],
      ['private 192.168.x', 'https://192.168.1.10:8443/hook', /public address in live mode/],
      [
        'link-local 169.254.x (cloud metadata)',
        'https://169.254.169.254/latest',
        /public address in live mode/,
      ],
      ['localhost', 'https://localhost/hook', /public address in live mode/],
      ['IPv6 loopback', 'https://[::1]/hook', /public address in live mode/],
      ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook', /public address in live mode/],
    ];
    for (const [name, url, message] of liveCases) {
      it(`refuses a live callback_url to ${name} with 400`, async () => {
        assertInvalid(await post({ ...BASE, callback_url: url }, live.live_key), 'callback_url', message);
      });
    }

    it('takes a live https callback_url on a public address', async () => {
      const res = await post({ ...BASE, callback_url: 'https://93.184.215.14/hook' }, live.live_key);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(json(res).livemode, true);
      assert.equal(json(res).callback_url, 'https://93.184.215.14/hook');
    });

    it('takes a private callback_url with the same merchant in test mode', async () => {
      const res = await post({ ...BASE, callback_url: 'https://10.1.2.3/hook' }, live.test_key);
      assert.equal(res.statusCode, 201, res.body);
    });
  });
});
