import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { type DemoKeys, freshDatabase, type RunningServer, startServer, type TestDatabase } from './spawn.ts';

export type Body = Record<string, unknown>;
type Method = 'GET' | 'POST';

export interface ServedSuite {
  readonly db: TestDatabase;
  readonly server: RunningServer;
  /** The keys the server's first start printed. */
  readonly keys: DemoKeys;
  /** A JSON request over TCP, with the demo test key unless another key is given. */
  call(
    method: Method,
    path: string,
    body?: Body,
    options?: { key?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Body; headers: Headers }>;
  /** A request whose status must be `status`: its body. */
  ok(method: Method, path: string, body?: Body, status?: number, key?: string): Promise<Body>;
  /** Moves the demo merchant's test clock; the answer comes once the jobs due by then have run. */
  advance(seconds: number): Promise<Body>;
}

/**
 * The real server (`safehold serve`: API and worker) on a fresh database, for the surrounding
 * describe: started by a `before` hook, stopped and its database dropped by an `after` hook.
 */
export function servedSuite(): ServedSuite {
  let db: TestDatabase | undefined;
  let server: RunningServer | undefined;
  let keys: DemoKeys | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the served suite is used before its before hook ran');
    return value;
  };
  before(async () => {
    db = await freshDatabase();
    server = await startServer(db.env);
    assert.ok(server.demo, 'the first start prints the demo keys');
    keys = server.demo;
  });
  after(async () => {
    await server?.stop();
    await db?.drop();
  });

  const call: ServedSuite['call'] = async (method, path, body, options = {}) => {
    const res = await fetch(`${started(server).url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? started(keys).testKey}`,
        'content-type': 'application/json',
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Body, headers: res.headers };
  };
  const ok: ServedSuite['ok'] = async (method, path, body, status = 200, key) => {
    const res = await call(method, path, body, { key });
    assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    get db() {
      return started(db);
    },
    get server() {
      return started(server);
    },
    get keys() {
      return started(keys);
    },
    call,
    ok,
    advance: (seconds) => ok('POST', '/v1/test_helpers/clock/advance', { seconds }),
  };
}
