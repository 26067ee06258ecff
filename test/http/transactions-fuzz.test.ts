import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { CURRENCIES, CURRENCY_EXPONENTS } from '../../src/domain/money.ts';
import { RELEASE_CONDITION_TYPES, VERTICALS } from '../../src/domain/transaction-states.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

/**
 * Property: whatever is posted to POST /v1/transactions, the answer is 201, 200 or a 4xx in the
 * error envelope; never a 5xx. Bodies range from nearly valid (one or two fields spoiled) to
 * arbitrary JSON and text.
 */

const TRICKY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202e',
  '\ufeff',
  '\n',
  '💸',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'x'.repeat(5_000),
  '9'.repeat(400),
  "'; DROP TABLE transactions; --",
  '{"$gt":""}',
  '__proto__',
  'constructor',
  '1e309',
  'NaN',
  '-0',
  '2026-02-30T00:00:00Z',
  '2030-06-30T23:59:60Z',
  '9999-12-31T23:59:59.999Z',
  '0000-01-01T00:00:00Z',
];

/** Characters that break naive code: NUL, controls, unpaired surrogates, bidi and line separators, quotes. */
const nastyChar = fc.constantFrom(
  '\u0000',
  '\u0007',
  '\u001b',
  '\n',
  '\t',
  '\ud800',
  '\udfff',
  '\u202e',
  '\ufeff',
  '\u2028',
  '\u00e9',
  '\u{1f600}',
  '"',
  '\\',
  "'",
  '%',
  'a',
  ' ',
);
const nastyString = fc.string({ unit: nastyChar, minLength: 1, maxLength: 20 });

/** Date-time texts, including forms a format check admits but Date cannot read. */
const dateish = fc.oneof(
  fc.constantFrom(
    '2099-12-31T23:59:60Z',
    '2099-02-30T00:00:00Z',
    '2099-01-01t00:00:00z',
    '2099-01-01 00:00:00Z',
    '2099-01-01T00:00:00+14:00',
    '2099-01-01T00:00:00',
    '+275760-09-13T00:00:00Z',
    '9999-12-31T23:59:59.999999999Z',
    '1969-12-31T23:59:59Z',
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 1, arbitrary: dateish },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((n) => Number(n)) },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }) },
);

const printable = (min: number, max: number) =>
  fc
    .oneof(
      fc.string({ minLength: min, maxLength: max }),
      fc.string({ unit: 'grapheme', minLength: min, maxLength: max }),
    )
    .filter((s) => /^[^\p{C}]*$/u.test(s) && [...s].length >= min && [...s].length <= max);

const email = fc.oneof(fc.emailAddress(), fc.constantFrom('buyer@example.com', 'a.b+c@shop.co.ke'));
const phone = fc.stringMatching(/^\+[0-9]{8,15}$/);
const url = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.constantFrom('https://example.com/hook', 'http://10.0.0.1:8080/x'),
);
const metadata = fc.dictionary(printable(1, 40), fc.string({ maxLength: 500 }), { maxKeys: 50 });
/** Metadata whose keys or values carry the characters above. */
const nastyMetadata = fc.dictionary(
  fc.oneof(printable(1, 40), nastyString),
  fc.oneof(fc.string(), nastyString),
  {
    minKeys: 1,
    maxKeys: 3,
  },
);
/** A small pool, so that replays (200) and conflicts (409) happen too. */
const reference = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('ref-a', 'ref-b', 'ref-c') },
  { weight: 3, arbitrary: printable(1, 128) },
);
const DAY_MS = 86_400_000;

/** A body that passes every rule (the flat and nested forms agree where both are given). */
const validBody = fc
  .record(
    {
      currency: fc.option(fc.constantFrom(...CURRENCIES), { nil: undefined }),
      whole: fc.integer({ min: 1, max: 1_000_000_000 }),
      cents: fc.integer({ min: 0, max: 99 }),
      title: printable(1, 200),
      merchant_reference: fc.option(reference, { nil: undefined }),
      merchant_order_id: fc.option(printable(1, 128), { nil: undefined }),
      vertical: fc.option(fc.constantFrom(...VERTICALS), { nil: undefined }),
      days: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
      daysForm: fc.constantFrom('flat', 'nested', 'both'),
      sellerEmail: fc.option(email, { nil: undefined }),
      sellerForm: fc.constantFrom('flat', 'nested', 'both'),
      customer: fc.option(fc.record({ name: printable(1, 200), phone, email }, { requiredKeys: [] }), {
        nil: undefined,
      }),
      sellerName: fc.option(printable(1, 200), { nil: undefined }),
      releaseType: fc.option(fc.constantFrom(...RELEASE_CONDITION_TYPES), { nil: undefined }),
      releaseInDays: fc.integer({ min: 1, max: 3650 }),
      callback_url: fc.option(url, { nil: undefined }),
      metadata: fc.option(metadata, { nil: undefined }),
    },
    { requiredKeys: [] },
  )
  .map((v) => {
    const exponent = v.currency === undefined ? 2 : CURRENCY_EXPONENTS[v.currency];
    const whole = v.whole ?? 1;
    const amount = exponent === 0 || whole === 1_000_000_000 ? whole : whole + (v.cents ?? 0) / 100;
    const body: Record<string, unknown> = { amount: Number(amount.toFixed(2)), title: v.title ?? 'x' };
    for (const name of [
      'currency',
      'merchant_reference',
      'merchant_order_id',
      'vertical',
      'callback_url',
      'metadata',
      'customer',
    ] as const) {
      if (v[name] !== undefined) body[name] = v[name];
    }
    const seller: Record<string, unknown> = {};
    if (v.sellerName !== undefined) seller.name = v.sellerName;
    if (v.sellerEmail !== undefined) {
      if (v.sellerForm !== 'nested') body.seller_email = v.sellerEmail;
      if (v.sellerForm !== 'flat') seller.email = v.sellerEmail;
    }
    if (Object.keys(seller).length > 0) body.seller = seller;
    const release: Record<string, unknown> = {};
    if (v.releaseType !== undefined) release.type = v.releaseType;
    if (v.releaseType === 'time_based') release.releaseInDays = v.releaseInDays ?? 1;
    if (v.days !== undefined) {
      if (v.daysForm !== 'nested') body.satisfaction_days = v.days;
      if (v.daysForm !== 'flat') release.review_window_days = v.days;
    }
    if (Object.keys(release).length > 0) body.release_condition = release;
    return body;
  });

/** Where a spoiled value can go: every field, top level and nested, and some unknown ones. */
const SPOIL_PATHS = [
  'amount',
  'title',
  'currency',
  'merchant_reference',
  'merchant_order_id',
  'vertical',
  'satisfaction_days',
  'seller_email',
  'customer',
  'customer.name',
  'customer.phone',
  'customer.email',
  'customer.extra',
  'seller',
  'seller.merchant_id',
  'seller.email',
  'seller.name',
  'release_condition',
  'release_condition.type',
  'release_condition.review_window_days',
  'release_condition.release_at',
  'callback_url',
  'metadata',
  'metadata.k',
  'idempotency_key',
  'unknown_field',
];

/** A spoiled value for a path: junk anywhere, plus targeted near-misses for some fields. */
const spoilFor = (path: string): fc.Arbitrary<unknown> => {
  if (path === 'metadata') return fc.oneof(junk, nastyMetadata);
  if (path === 'release_condition') {
    return fc.oneof(
      junk,
      dateish.map((releaseAt) => ({ type: 'time_based', release_at: releaseAt })),
    );
  }
  if (path.endsWith('release_at')) return fc.oneof(junk, dateish);
  return junk;
};

const spoils = fc.oneof(
  { weight: 2, arbitrary: fc.constant([] as Array<[string, unknown]>) },
  {
    weight: 3,
    arbitrary: fc.array(
      fc.constantFrom(...SPOIL_PATHS).chain((path) => fc.tuple(fc.constant(path), spoilFor(path))),
      { minLength: 1, maxLength: 3 },
    ),
  },
);

function spoil(body: Record<string, unknown>, changes: Array<[string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(body);
  for (const [path, value] of changes) {
    const [head, child] = path.split('.') as [string, string | undefined];
    if (child === undefined) {
      out[head] = value;
      continue;
    }
    const parent = out[head];
    out[head] =
      parent !== null && typeof parent === 'object' && !Array.isArray(parent)
        ? { ...parent, [child]: value }
        : { [child]: value };
  }
  return out;
}

/** Turns the relative release time into an instant, at the harness clock's present. */
function materialise(body: Record<string, unknown>, now: Date): Record<string, unknown> {
  const release = body.release_condition as Record<string, unknown> | undefined;
  if (release && typeof release.releaseInDays === 'number') {
    const { releaseInDays, ...rest } = release;
    body.release_condition = {
      ...rest,
      release_at: new Date(now.getTime() + releaseInDays * DAY_MS).toISOString(),
    };
  }
  return body;
}

/** How the request carries an idempotency key: mostly not at all or a fresh one, sometimes a reused or clashing one. */
const keying = fc.record({
  mode: fc.constantFrom(
    'nasty-body',
    'none',
    'none',
    'none',
    'fresh-body',
    'fresh-header',
    'pool-body',
    'pool-header',
    'both-same',
    'both-differ',
    'odd-header',
  ),
  fresh: fc.uuid(),
  pooled: fc.constantFrom('key-1', 'key-2', 'key-3'),
  odd: fc.stringMatching(/^[\x20-\x7e]{0,300}$/),
  nasty: nastyString,
});

function applyKeying(
  body: Record<string, unknown>,
  k: { mode: string; fresh: string; pooled: string; odd: string; nasty: string },
) {
  const headers: Record<string, string> = {};
  if (k.mode === 'fresh-body') body.idempotency_key = k.fresh;
  if (k.mode === 'nasty-body') body.idempotency_key = k.nasty;
  if (k.mode === 'fresh-header' || k.mode === 'both-same') headers['idempotency-key'] = k.fresh;
  if (k.mode === 'both-same') body.idempotency_key = k.fresh;
  if (k.mode === 'pool-body') body.idempotency_key = k.pooled;
  if (k.mode === 'pool-header') headers['idempotency-key'] = k.pooled;
  if (k.mode === 'both-differ') {
    headers['idempotency-key'] = k.fresh;
    body.idempotency_key = k.pooled;
  }
  if (k.mode === 'odd-header') headers['idempotency-key'] = k.odd;
  return headers;
}

const fuzzedBody = fc.tuple(validBody, spoils, keying);

const CODES = new Set(Object.keys(ERROR_CATALOGUE));

function assertWellFormed(res: LightMyRequestResponse, sent: unknown): void {
  const context = `status ${res.statusCode} for ${JSON.stringify(sent)?.slice(0, 500)}: ${res.body.slice(0, 300)}`;
  assert.ok(
    res.statusCode === 200 || res.statusCode === 201 || (res.statusCode >= 400 && res.statusCode < 500),
    context,
  );
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode < 300) {
    assert.equal(body.object, 'transaction', context);
    assert.equal(typeof body.service_transaction_id, 'string', context);
    assert.ok(Number.isSafeInteger(body.amount_minor) && Number(body.amount_minor) > 0, context);
    if (res.statusCode === 201 && sent !== null && typeof sent === 'object' && 'amount' in sent) {
      assert.equal(body.amount, (sent as { amount: unknown }).amount, `amount echoed exactly: ${context}`);
    }
    return;
  }
  const error = body.error as Record<string, unknown> | undefined;
  assert.ok(error && typeof error === 'object', context);
  for (const name of ['code', 'message', 'request_id', 'type'] as const) {
    assert.equal(typeof error[name], 'string', `${name}: ${context}`);
  }
  assert.ok(CODES.has(String(error.code)), context);
  assert.equal(error.request_id, res.headers['x-request-id'], context);
  if (error.param !== undefined) assert.equal(typeof error.param, 'string', context);
  assert.ok(!/\bat .*\.ts:\d+|SELECT |INSERT /.test(String(error.message)), `no stack or SQL: ${context}`);
}

describe('POST /v1/transactions under fuzzed bodies', () => {
  let h: Harness;
  let verified: CreatedMerchant;
  before(async () => {
    h = await startHarness();
    verified = await h.newMerchant({ verified: true });
  });
  after(() => h.close());

  const post = (payload: string, headers: Record<string, string> = {}, key?: string) =>
    h.request({
      method: 'POST',
      url: '/v1/transactions',
      key,
      headers: { 'content-type': 'application/json', ...headers },
      payload,
    });

  it('never answers 5xx to valid bodies with up to three spoiled fields (test mode)', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzedBody, async ([valid, changes, k]) => {
        const base = materialise(structuredClone(valid), h.clock.now());
        const headers = applyKeying(base, k);
        const body = spoil(base, changes);
        const res = await post(JSON.stringify(body), headers);
        assertWellFormed(res, body);
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        if (changes.length === 0 && k.mode === 'none' && body.merchant_reference === undefined) {
          assert.equal(
            res.statusCode,
            201,
            `a valid body must be created: ${JSON.stringify(body)} -> ${res.body}`,
          );
        }
        if (res.statusCode < 300) {
          // Sending an accepted request again replays it when it carries a key or a reference.
          const again = await post(JSON.stringify(body), headers);
          seen.set(again.statusCode, (seen.get(again.statusCode) ?? 0) + 1);
          const id = (res.json() as { service_transaction_id: string }).service_transaction_id;
          const againId = (again.json() as { service_transaction_id?: string }).service_transaction_id;
          if (
            body.idempotency_key !== undefined ||
            headers['idempotency-key'] !== undefined ||
            body.merchant_reference !== undefined
          ) {
            assert.equal(again.statusCode, 200, again.body);
            assert.equal(again.headers['idempotent-replayed'], 'true');
            assert.equal(againId, id);
          } else {
            assert.equal(again.statusCode, 201, again.body);
            assert.notEqual(againId, id);
          }
        }
      }),
      { numRuns: 400 },
    );
    // The generator must reach every kind of answer, or the property proves little.
    for (const status of [200, 201, 400, 409])
      assert.ok((seen.get(status) ?? 0) >= 10, `too few ${status}: ${JSON.stringify([...seen])}`);
  });

  it('never answers 5xx in live mode, where callback URLs are checked against private addresses', async () => {
    const liveUrl = fc.constantFrom(
      'https://93.184.215.14/hook',
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://169.254.169.254/',
      'https://0.0.0.0/',
      'https://localhost/hook',
      'http://93.184.215.14/hook',
      'https://[2606:2800:220:1:248:1893:25c8:1946]/hook',
    );
    const liveBody = fc.record(
      {
        amount: fc.oneof(fc.integer({ min: 1, max: 1000 }), junk),
        title: fc.oneof(printable(1, 50), junk),
        callback_url: fc.oneof({ weight: 4, arbitrary: liveUrl }, { weight: 1, arbitrary: junk }),
      },
      { requiredKeys: ['amount', 'title'] },
    );
    await fc.assert(
      fc.asyncProperty(liveBody, async (body) => {
        assertWellFormed(await post(JSON.stringify(body), {}, verified.live_key), body);
      }),
      { numRuns: 60 },
    );
  });

  it('never answers 5xx to arbitrary JSON values', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        assertWellFormed(await post(JSON.stringify(value) ?? 'null'), value);
      }),
      { numRuns: 150 },
    );
  });

  it('never answers 5xx to arbitrary text sent as JSON', async () => {
    const raw = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constantFrom(
        '{',
        '{"amount":}',
        '[1,2',
        '"\\ud800"',
        '{"__proto__":{"x":1}}',
        '{"a":1}{"b":2}',
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
      ),
    );
    await fc.assert(
      fc.asyncProperty(raw, async (payload) => {
        assertWellFormed(await post(payload), payload);
      }),
      { numRuns: 100 },
    );
  });
});
