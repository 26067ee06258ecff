import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  verifyWebhook,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
} from '../../src/index.ts';
import { runDueWebhooks } from '../../src/worker/run-due-webhooks.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { childEnv, NODE, ROOT } from '../helpers/spawn.ts';

const SECRET = 'whsec_testsecret0123456789abcdefghijklmnop';
const sign = (secret: string, timestamp: number, body: string) =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

function signed(body: string, timestamp: number, secret = SECRET): Record<string, string> {
  return {
    'x-service-signature': sign(secret, timestamp, body),
    'x-service-timestamp': String(timestamp),
    'x-service-event-id': (JSON.parse(body) as { event_id: string }).event_id,
  };
}

describe('receiver kit: verifyWebhook', () => {
  const body = JSON.stringify({ event_id: 'evt_1', event_type: 'transaction.paid', occurred_at: 'x' });
  const now = 1_800_000_000;
  const at = { now: now * 1000 };

  it('returns the event for a signed, fresh request (raw string or bytes, any header case, Fetch Headers)', () => {
    assert.equal(verifyWebhook(body, signed(body, now), SECRET, at).event_id, 'evt_1');
    assert.equal(
      verifyWebhook(Buffer.from(body), signed(body, now), SECRET, at).event_type,
      'transaction.paid',
    );
    const upper = Object.fromEntries(Object.entries(signed(body, now)).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(verifyWebhook(body, upper, SECRET, at).event_id, 'evt_1');
    assert.equal(verifyWebhook(body, new Headers(signed(body, now)), SECRET, at).event_id, 'evt_1');
  });

  it('throws WebhookSignatureError for a changed body, a wrong secret or a missing signature', () => {
    const headers = signed(body, now);
    for (const attempt of [
      () => verifyWebhook(body.replace('paid', 'completed'), headers, SECRET, at),
      () => verifyWebhook(`${body} `, headers, SECRET, at),
      () => verifyWebhook(body, headers, 'whsec_other', at),
      () => verifyWebhook(body, { ...headers, 'x-service-signature': 'sha256=00' }, SECRET, at),
      () =>
        verifyWebhook(
          body,
          { ...headers, 'x-service-signature': headers['x-service-signature']?.toUpperCase() },
          SECRET,
          at,
        ),
      () => verifyWebhook(body, { 'x-service-timestamp': String(now) }, SECRET, at),
      () =>
        verifyWebhook(body, { ...headers, 'x-service-timestamp': String(now + 1) }, SECRET, {
          now: (now + 1) * 1000,
        }),
      () => verifyWebhook(body, { ...headers, 'x-service-event-id': 'evt_2' }, SECRET, at),
    ]) {
      assert.throws(attempt, (error: unknown) => {
        assert.ok(error instanceof WebhookSignatureError, String(error));
        assert.ok(error instanceof WebhookVerificationError);
        assert.ok(!(error instanceof WebhookTimestampError));
        return true;
      });
    }
  });

  it('throws WebhookTimestampError beyond 300 s either way (or the given tolerance), and for a missing timestamp', () => {
    assert.ok(verifyWebhook(body, signed(body, now - 300), SECRET, at));
    assert.ok(verifyWebhook(body, signed(body, now + 300), SECRET, at));
    for (const attempt of [
      () => verifyWebhook(body, signed(body, now - 301), SECRET, at),
      () => verifyWebhook(body, signed(body, now + 301), SECRET, at),
      () => verifyWebhook(body, signed(body, now - 31), SECRET, { ...at, toleranceSeconds: 30 }),
      () => verifyWebhook(body, { 'x-service-signature': sign(SECRET, now, body) }, SECRET, at),
      () => verifyWebhook(body, { ...signed(body, now), 'x-service-timestamp': 'soon' }, SECRET, at),
    ]) {
      assert.throws(attempt, (error: unknown) => {
        assert.ok(error instanceof WebhookTimestampError, String(error));
        assert.ok(!(error instanceof WebhookSignatureError));
        return true;
      });
    }
  });

  it('accepts either of two secrets while switching to a rotated one', () => {
    const headers = signed(body, now, 'whsec_new');
    assert.ok(verifyWebhook(body, headers, ['whsec_old', 'whsec_new'], at));
    assert.throws(() => verifyWebhook(body, headers, ['whsec_old'], at), WebhookSignatureError);
  });
});

describe('the example receiver (examples/receiver.ts), run as a process, against real deliveries', () => {
  let h: Harness;
  let child: ChildProcess;
  let url = '';
  let stdout = '';
  let secret = '';

  before(async () => {
    h = await startHarness();
    secret = json<{ secret: string }>(
      await h.request({ method: 'POST', url: '/v1/webhook_secret/rotate' }),
    ).secret;
    child = spawn(NODE, [join(ROOT, 'examples/receiver.ts')], {
      cwd: ROOT,
      env: childEnv({ WEBHOOK_SECRET: secret, PORT: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const match = /listening on (\S+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      child.on('exit', (code) => reject(new Error(`receiver exited ${code}: ${stdout}`)));
    });
  });
  after(async () => {
    child.kill('SIGTERM');
    await h.close();
  });

  const attemptsOf = async (eventId: string) =>
    json<{ deliveries: { attempts: { status_code: number; response_excerpt: string }[] }[] }>(
      await h.request({ method: 'GET', url: `/v1/events/${eventId}` }),
    ).deliveries.flatMap((d) => d.attempts);

  it('accepts a delivery (200), answers a redelivery 200 without applying it twice', async () => {
    const created = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      payload: { amount: 42, title: 'Lamp', merchant_order_id: 'SO-9', callback_url: `${url}/webhooks` },
    });
    assert.equal(created.statusCode, 201);
    await runDueWebhooks(h.ctx);
    const [event] = json<{ data: { id: string }[] }>(
      await h.request({ method: 'GET', url: '/v1/events' }),
    ).data;
    assert.ok(event);
    assert.deepEqual(
      (await attemptsOf(event.id)).map((a) => a.status_code),
      [200],
    );
    await h.request({ method: 'POST', url: `/v1/events/${event.id}/redeliver` });
    await runDueWebhooks(h.ctx);
    const attempts = await attemptsOf(event.id);
    assert.deepEqual(
      attempts.map((a) => a.status_code),
      [200, 200],
    );
    assert.deepEqual(attempts.map((a) => a.response_excerpt).sort(), [
      '{"received":true,"duplicate":true}',
      '{"received":true}',
    ]);
    assert.equal(stdout.split(event.id).length - 1, 1, 'processed once');
    assert.match(stdout, /transaction\.created .* order=SO-9/);
  });

  it('answers 400 to a stale timestamp and 401 to a bad signature', async () => {
    const body = JSON.stringify({ event_id: 'evt_stale', event_type: 'transaction.paid', occurred_at: 'x' });
    const old = Math.floor(Date.now() / 1000) - 600;
    const stale = await fetch(url, { method: 'POST', body, headers: signed(body, old, secret) });
    assert.equal(stale.status, 400);
    const fresh = Math.floor(Date.now() / 1000);
    const forged = await fetch(url, { method: 'POST', body, headers: signed(body, fresh, 'whsec_wrong') });
    assert.equal(forged.status, 401);
    const ok = await fetch(url, { method: 'POST', body, headers: signed(body, fresh, secret) });
    assert.equal(ok.status, 200);
  });
});
