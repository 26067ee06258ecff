import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, type RunningServer, startServer, type TestDatabase } from '../helpers/spawn.ts';

/** The real server process on a real socket, driven with fetch (undici) as a client would. */
describe('the API over TCP', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let key: string;

  const api = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key: override, headers, ...rest } = init;
    const auth = override === null ? {} : { authorization: `Bearer ${override ?? key}` };
    return fetch(`${server.url}${path}`, { ...rest, headers: { ...auth, ...headers } });
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    api('/v1/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    db = await freshDatabase();
    server = await startServer({ ...db.env, LOG_LEVEL: 'info' });
    key = server.demo?.testKey as string;
    assert.ok(key, server.stdout());
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  it('creates a transaction (201), reads it back and finds it in the list', async () => {
    const created = await post({ amount: 999.99, title: 'Bicycle', merchant_reference: 'tcp-1' });
    assert.equal(created.status, 201);
    assert.match(created.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(created.headers.get('x-request-id') ?? '', /^req_/);
    const t = (await created.json()) as {
      service_transaction_id: string;
      amount_minor: number;
      payment_link: string;
    };
    assert.equal(t.amount_minor, 99999);
    assert.ok(
      t.payment_link.startsWith(`${server.url}/pay/`),
      'PUBLIC_URL follows the port bound with PORT=0',
    );

    const got = await api(`/v1/transactions/${t.service_transaction_id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(await got.json(), t);

    const list = await api('/v1/transactions?limit=10');
    assert.equal(list.status, 200);
    const page = (await list.json()) as { data: Array<{ service_transaction_id: string }> };
    assert.deepEqual(
      page.data.map((x) => x.service_transaction_id),
      [t.service_transaction_id],
    );
  });

  it('replays an identical create with 200 and Idempotent-Replayed over the wire', async () => {
    const body = { amount: 10, title: 'Pen', merchant_reference: 'tcp-replay' };
    const first = await post(body);
    const second = await post(body);
    assert.equal(first.status, 201);
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
  });

  it('answers errors with the envelope and the request id', async () => {
    const missing = await api('/v1/transactions/txn_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    assert.equal(missing.status, 404);
    const body = (await missing.json()) as {
      error: { code: string; type: string; request_id: string; message: string };
    };
    assert.equal(body.error.code, 'not_found');
    assert.equal(body.error.request_id, missing.headers.get('x-request-id'));
    assert.equal(typeof body.error.message, 'string');

    const unauthenticated = await api('/v1/transactions', { key: null });
    assert.equal(unauthenticated.status, 401);
    assert.equal(
      ((await unauthenticated.json()) as { error: { type: string } }).error.type,
      'authentication_failed',
    );

    const malformed = await api('/v1/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount": 1,',
    });
    assert.equal(malformed.status, 400);
    assert.ok(((await malformed.json()) as { error?: { code: string } }).error?.code);
  });

  it('/healthz and /readyz answer 200 without a key', async () => {
    const health = await api('/healthz', { key: null });
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await api('/readyz', { key: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
  });

  it('serves a valid OpenAPI 3.1 document describing the transactions API', async () => {
    const res = await api('/v1/openapi.json', { key: null });
    assert.equal(res.status, 200);
    const doc = (await res.json()) as {
      openapi: string;
      info: { title: string };
      servers: Array<{ url: string }>;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
    };
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Safehold API');
    assert.deepEqual(doc.servers, [{ url: server.url }]);
    const transactions = doc.paths['/v1/transactions'];
    assert.ok(transactions?.post, 'POST /v1/transactions');
    assert.ok(transactions?.get, 'GET /v1/transactions');
    assert.ok(transactions.post.responses['201'], 'the create documents its 201');
    assert.ok(doc.paths['/v1/transactions/{id}']?.get, 'GET /v1/transactions/{id}');
    assert.deepEqual(
      {
        type: doc.components.securitySchemes.bearerAuth?.type,
        scheme: doc.components.securitySchemes.bearerAuth?.scheme,
      },
      { type: 'http', scheme: 'bearer' },
    );
  });

  it('serves the human docs page as HTML', async () => {
    const res = await api('/docs', { key: null });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /<html/i);
  });

  it('logs each request as structured JSON carrying its request id', async () => {
    const res = await api('/healthz', { key: null, headers: { 'user-agent': 'log-check' } });
    const requestId = res.headers.get('x-request-id');
    assert.ok(requestId);
    await res.text();
    // The log line travels on another pipe than the response: wait for it to arrive.
    const logged = () =>
      server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .some((line) => (JSON.parse(line) as { reqId?: string }).reqId === requestId);
    for (let i = 0; i < 200 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(logged(), 'a JSON log line carrying the request id');
  });
});
