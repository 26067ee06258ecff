import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, type RunningServer, startServer, type TestDatabase } from '../helpers/spawn.ts';

interface LogLine {
  msg?: string;
  reqId?: string;
  signal?: string;
  req?: { method?: string; url?: string };
}

/** The server's JSON log lines, in the order the server wrote them (pino writes synchronously). */
function logLines(server: RunningServer): LogLine[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** Waits until the server's log holds a line matching `test` (the server's own word, not a timer). */
async function logged(server: RunningServer, test: (line: LogLine) => boolean): Promise<LogLine> {
  for (;;) {
    const line = logLines(server).find(test);
    if (line) return line;
    if (server.child.exitCode !== null)
      throw new Error(`server exited:\n${server.stdout()}${server.stderr()}`);
    await sleep(5);
  }
}

interface Outcome {
  status?: number;
  requestId?: string;
  body?: { service_transaction_id?: string; error?: { code: string } };
  error?: string;
}

async function readOutcome(res: IncomingMessage): Promise<Outcome> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return {
    status: res.statusCode,
    requestId: String(res.headers['x-request-id']),
    body: JSON.parse(text) as Outcome['body'],
  };
}

/**
 * SIGTERM while requests are in flight: the server stops accepting connections, finishes every
 * request it had received, answers each completely, exits 0, and the database holds exactly the
 * transactions it answered 201.
 */
describe('graceful shutdown on SIGTERM', () => {
  const BURST = 60;
  let db: TestDatabase;
  let server: RunningServer;

  before(async () => {
    db = await freshDatabase();
    server = await startServer({ ...db.env, RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' });
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  // The limit is a guard, not a measurement: an orchestrator kills after about 30 s, and a server that
  // waited out the 72 s keep-alive timeout of the burst's idle connections would never exit in time.
  it('finishes a create whose body is still arriving and a burst of creates, then exits 0', {
    timeout: 60_000,
  }, async () => {
    const key = server.demo?.testKey as string;
    const url = new URL('/v1/transactions', server.url);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    // 1. A create the server has begun (headers in, authenticated) but whose body is not all sent.
    const slowBody = JSON.stringify({ amount: 4200, title: 'Slow upload', merchant_reference: 'slow-1' });
    const slow = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(slowBody)) },
    });
    const slowOutcome = new Promise<Outcome>((resolve, reject) => {
      slow.on('response', (res) => readOutcome(res).then(resolve, reject));
      slow.on('error', reject);
    });
    slow.write(slowBody.slice(0, 12));
    const slowLine = await logged(server, (l) => l.msg === 'incoming request' && l.req?.method === 'POST');

    // 2. A burst of concurrent creates, started just before the signal.
    const burst = Array.from({ length: BURST }, async (_, i): Promise<Outcome> => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ amount: 100 + i, title: `Item ${i}`, merchant_reference: `burst-${i}` }),
        });
        const body = (await res.json()) as Outcome['body'];
        return { status: res.status, requestId: res.headers.get('x-request-id') ?? undefined, body };
      } catch (error) {
        // No response at all: the connection was refused or reset before the server read the request.
        return { error: String((error as Error).cause ?? error) };
      }
    });
    await logged(server, (l) => l.msg === 'request completed' && l.reqId !== slowLine.reqId);

    process.kill(server.child.pid as number, 'SIGTERM');
    await logged(server, (l) => l.signal === 'SIGTERM');

    // 3. Closing: no new connection is accepted, but the slow create is still being waited for.
    await assert.rejects(
      fetch(new URL('/healthz', server.url)),
      'a new connection is refused while draining',
    );
    assert.equal(server.child.exitCode, null, 'the server waits for the request still in flight');
    slow.end(slowBody.slice(12));

    const slowResult = await slowOutcome;
    assert.equal(slowResult.status, 201);
    assert.equal(slowResult.requestId, slowLine.reqId);
    assert.match(String(slowResult.body?.service_transaction_id), /^txn_/);

    const outcomes = await Promise.all(burst);
    const exit = await server.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());

    // Every request the server logged as received was answered, completely.
    const byRequestId = new Map(outcomes.filter((o) => o.requestId).map((o) => [o.requestId as string, o]));
    byRequestId.set(slowResult.requestId as string, slowResult);
    const received = logLines(server).filter(
      (l) => l.msg === 'incoming request' && l.req?.url === '/v1/transactions',
    );
    assert.ok(received.length > 1, 'burst requests reached the server');
    for (const line of received) {
      const outcome = byRequestId.get(line.reqId as string);
      assert.ok(outcome, `request ${line.reqId} was received and answered`);
      assert.equal(outcome.status, 201, JSON.stringify(outcome));
      assert.match(String(outcome.body?.service_transaction_id), /^txn_/);
    }
    // The rest never got in: a connection error, not a half answer.
    for (const o of outcomes)
      if (o.status === undefined) assert.match(String(o.error), /ECONN(REFUSED|RESET)|socket/i);

    const created = [slowResult, ...outcomes]
      .filter((o) => o.status === 201)
      .map((o) => o.body?.service_transaction_id);
    const store = await db.open();
    try {
      const { rows } = await store.query<{ id: string }>('SELECT id FROM transactions');
      assert.deepEqual(
        rows.map((r) => r.id).sort(),
        created.sort(),
        'the database holds exactly the transactions that were answered 201',
      );
    } finally {
      await store.close();
    }
  });
});
