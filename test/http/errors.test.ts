import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BODY_LIMIT_BYTES } from '../../src/http/json-body.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const post = (payload: string | Buffer, contentType = 'application/json') =>
  h.request({ method: 'POST', url: '/v1/transactions', payload, headers: { 'content-type': contentType } });

describe('unknown routes and methods', () => {
  it('answers an unknown route with 404 not_found, with or without a key', async () => {
    for (const key of [null, undefined]) {
      const res = await h.request({ method: 'GET', url: '/v1/no-such-thing', key });
      const error = assertErrorEnvelope(res, 404, 'not_found', 'not_found');
      assert.match(error.message, /GET \/v1\/no-such-thing/);
    }
  });

  it('answers 404 for an unknown route whatever body it carries', async () => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/no-such-thing',
      payload: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    assertErrorEnvelope(res, 404, 'not_found', 'not_found');
  });

  it('answers a wrong method on a known path with 405 invalid_request and an Allow header', async () => {
    const cases = [
      { method: 'DELETE' as const, url: '/v1/transactions', allow: ['GET', 'POST'] },
      { method: 'PUT' as const, url: '/v1/transactions/txn_01AAAAAAAAAAAAAAAAAAAAAAAA', allow: ['GET'] },
      { method: 'PATCH' as const, url: '/v1/transactions/', allow: ['GET', 'POST'] },
      { method: 'POST' as const, url: '/healthz', allow: ['GET'] },
    ];
    for (const c of cases) {
      const res = await h.request({ method: c.method, url: c.url, key: null });
      const error = assertErrorEnvelope(res, 405, 'invalid_request', 'invalid_request');
      const allow = String(res.headers.allow)
        .split(',')
        .map((m) => m.trim())
        .sort();
      assert.deepEqual(allow, c.allow, `${c.method} ${c.url}`);
      assert.match(error.message, new RegExp(`^${c.method} is not allowed`));
    }
  });

  it('answers a URL that cannot be decoded with 400 invalid_request in the envelope', async () => {
    const res = await h.request({ method: 'GET', url: '/v1/transactions/%E0%A4%A' });
    assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
  });

  it('answers over-long path parameters with 400 invalid_request in the envelope', async () => {
    // 65..100 characters reach the route and fail its schema; beyond 100 the router itself refuses.
    for (const length of [80, 500]) {
      const res = await h.request({ method: 'GET', url: `/v1/transactions/txn_${'x'.repeat(length)}` });
      assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
    }
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 invalid_request', async () => {
    for (const body of ['{"amount": 10, "title": ', '{amount: 10}', "{'amount': 10}", '{"amount": 10,}']) {
      const res = await post(body);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.match(error.message, /not valid JSON/);
    }
  });

  it('answers a JSON body that is not an object with 400 invalid_request', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      const res = await post(body);
      assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
    }
  });

  it('refuses prototype-poisoning keys with 400 and leaves Object.prototype untouched', async () => {
    const bodies = [
      '{"amount": 10, "title": "x", "__proto__": {"polluted": true}}',
      '{"amount": 10, "title": "x", "metadata": {"__proto__": {"polluted": true}}}',
      '{"amount": 10, "title": "x", "constructor": {"prototype": {"polluted": true}}}',
    ];
    for (const body of bodies) {
      const res = await post(body);
      assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('answers a body over 1 MiB with 413 invalid_request', async () => {
    const title = 'x'.repeat(BODY_LIMIT_BYTES);
    const res = await post(JSON.stringify({ amount: 10, title }));
    const error = assertErrorEnvelope(res, 413, 'invalid_request', 'invalid_request');
    assert.match(error.message, /1 MiB/);
  });

  it('reads a body of exactly 1 MiB (and then validates it)', async () => {
    const shell = JSON.stringify({ amount: 10, title: '' });
    const body = JSON.stringify({ amount: 10, title: 'x'.repeat(BODY_LIMIT_BYTES - shell.length) });
    assert.equal(Buffer.byteLength(body), BODY_LIMIT_BYTES);
    const res = await post(body);
    // Read and parsed: the title is far over 200 characters, so validation answers.
    const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
    assert.equal(error.param, 'title');
  });

  it('answers a body that is not JSON with 415 invalid_request', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await post('amount=10&title=x', type);
      const error = assertErrorEnvelope(res, 415, 'invalid_request', 'invalid_request');
      assert.match(error.message, /application\/json/);
    }
  });

  it('answers a body with no Content-Type with 415 invalid_request', async () => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: Buffer.from('{"amount":1}'),
    });
    assertErrorEnvelope(res, 415, 'invalid_request', 'invalid_request');
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await post(
      JSON.stringify({ amount: 10, title: 'With charset' }),
      'application/json; charset=utf-8',
    );
    assert.equal(res.statusCode, 201, res.body);
  });

  it('reads an empty POST body as {} so validation names the first missing field', async () => {
    const res = await h.request({ method: 'POST', url: '/v1/transactions' });
    const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
    assert.equal(error.param, 'amount');
  });
});

describe('unexpected failures', () => {
  /**
   * A real failure, not a stub: the transactions table is renamed away under the running service,
   * so the database answers with a genuine error (relation "transactions" does not exist, with
   * the SQL). The service must answer 500 internal_error without leaking that text. The table is
   * put back afterwards so the harness stays usable.
   */
  async function withTransactionsTableGone(fn: () => Promise<void>): Promise<void> {
    await h.ctx.db.exec('ALTER TABLE transactions RENAME TO transactions_away');
    try {
      await fn();
    } finally {
      await h.ctx.db.exec('ALTER TABLE transactions_away RENAME TO transactions');
    }
  }

  const LEAKS = [
    /transactions/i,
    /relation/i,
    /select|insert|from|where/i,
    /\bat\s/,
    /\.ts\b/,
    /\.js\b/,
    /pglite|postgres|pg_/i,
  ];

  it('answers a database failure with 500 internal_error, no SQL and no stack trace', async () => {
    await withTransactionsTableGone(async () => {
      const responses = [
        await h.request({ method: 'GET', url: '/v1/transactions' }),
        await h.request({ method: 'GET', url: '/v1/transactions/txn_01AAAAAAAAAAAAAAAAAAAAAAAA' }),
        await h.request({
          method: 'POST',
          url: '/v1/transactions',
          payload: { amount: 10, title: 'Doomed' },
        }),
      ];
      for (const res of responses) {
        const error = assertErrorEnvelope(res, 500, 'internal_error', 'internal_error');
        assert.equal(error.param, undefined);
        for (const leak of LEAKS) assert.doesNotMatch(res.body, leak);
        assert.match(error.message, /request_id/);
      }
    });
    const after = await h.request({ method: 'GET', url: '/v1/transactions' });
    assert.equal(after.statusCode, 200, 'the service recovers once the table is back');
  });

  it('does not half-create a transaction when the failure comes mid-request', async () => {
    const reference = 'error-test-atomic';
    await withTransactionsTableGone(async () => {
      const res = await h.request({
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: 10, title: 'Doomed', merchant_reference: reference },
      });
      assert.equal(res.statusCode, 500);
    });
    const retry = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 10, title: 'Doomed', merchant_reference: reference },
    });
    assert.equal(retry.statusCode, 201, `a retry after a 500 must create the transaction: ${retry.body}`);
  });
});
