import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { createMailer } from '../../src/mail/mailer.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { findMerchant } from '../../src/store/merchants.ts';
import { runDueWebhooks } from '../../src/worker/run-due-webhooks.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from './receiver.ts';

interface Mail {
  to: string[];
  body: string;
}

interface Endpoint {
  id: string;
  failing: boolean;
  failing_since: string | null;
  last_alert_at: string | null;
}

/** The whole retry schedule: 60 s, 5 min, 30 min, 2 h. */
const SCHEDULE = [60, 300, 1800, 7200];

describe('failing endpoints: flag, e-mail alert at most once per 24 h, cleared by a success', () => {
  let h: Harness;
  let smtp: SMTPServer;
  const mails: Mail[] = [];
  const receivers: Receiver[] = [];

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        let body = '';
        stream.on('data', (chunk: Buffer) => {
          body += chunk.toString('utf8');
        });
        stream.on('end', () => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            body: body.replace(/=\r?\n/g, ''),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    h = await startHarness();
    h.ctx.mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      from: 'Safehold <no-reply@example.com>',
      logger: { info: () => {} },
    });
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await h.close();
    await new Promise<void>((resolve) => smtp.close(resolve));
  });

  async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }

  const advance = async (merchant: CreatedMerchant, seconds: number) => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/test_helpers/clock/advance',
      key: merchant.test_key,
      payload: { seconds },
    });
    assert.equal(res.statusCode, 200, res.body);
  };

  const createTransaction = async (merchant: CreatedMerchant, body: Record<string, unknown> = {}) => {
    const res = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: { amount: 10, title: 'Pen', ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return String(json(res).service_transaction_id);
  };

  /** The first attempt now, then each retry as the test clock reaches it. */
  const runSchedule = async (merchant: CreatedMerchant) => {
    await runDueWebhooks(h.ctx);
    for (const wait of SCHEDULE) await advance(merchant, wait);
  };

  const emailOf = async (merchant: CreatedMerchant) =>
    (await findMerchant(h.ctx.db, merchant.merchant_id))?.email;

  const endpointOf = async (merchant: CreatedMerchant, id: string) =>
    json<Endpoint>(
      await h.request({ method: 'GET', url: `/v1/webhook_endpoints/${id}`, key: merchant.test_key }),
    );

  const failedEvents = async (merchant: CreatedMerchant) =>
    json<{ data: { id: string; service_transaction_id: string; delivery_failed: boolean }[] }>(
      await h.request({ method: 'GET', url: '/v1/events?delivery_failed=true', key: merchant.test_key }),
    ).data;

  it('flags the endpoint after the fifth failed attempt, e-mails the merchant once in 24 h, and clears on success', async () => {
    let up = false;
    const r = await receiver(() => (up ? { status: 200 } : { status: 503, body: 'maintenance' }));
    const merchant = await h.newMerchant();
    const endpoint = json<Endpoint>(
      await h.request({
        method: 'POST',
        url: '/v1/webhook_endpoints',
        key: merchant.test_key,
        payload: { url: `${r.url}/hooks`, enabled_events: ['transaction.created'] },
      }),
    );

    const first = await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    for (const wait of SCHEDULE.slice(0, 3)) await advance(merchant, wait);
    assert.equal(r.received.length, 4);
    assert.equal((await endpointOf(merchant, endpoint.id)).failing, false, 'not before the last attempt');
    assert.equal(mails.length, 0);

    await advance(merchant, 7200);
    assert.equal(r.received.length, 5);
    const flagged = await endpointOf(merchant, endpoint.id);
    assert.equal(flagged.failing, true);
    assert.ok(flagged.failing_since);
    assert.ok(flagged.last_alert_at, 'the alert is kept on the endpoint');
    assert.equal(mails.length, 1, 'one e-mail, sent before the clock answered');
    assert.deepEqual(mails[0]?.to, [await emailOf(merchant)]);
    assert.ok(mails[0]?.body.includes(`${r.url}/hooks`), 'the mail names the URL');
    assert.ok(mails[0]?.body.includes('HTTP 503'));

    const second = await createTransaction(merchant);
    await runSchedule(merchant);
    assert.equal(r.received.length, 10);
    assert.equal(mails.length, 1, 'no second alert within 24 hours');

    await advance(merchant, 86_400);
    const third = await createTransaction(merchant);
    await runSchedule(merchant);
    assert.equal(mails.length, 2, 'a new alert once 24 hours have passed');
    assert.notEqual((await endpointOf(merchant, endpoint.id)).last_alert_at, flagged.last_alert_at);

    const failed = await failedEvents(merchant);
    assert.deepEqual(failed.map((e) => e.service_transaction_id).sort(), [first, second, third].sort());
    assert.ok(failed.every((e) => e.delivery_failed));

    up = true;
    await createTransaction(merchant);
    await runDueWebhooks(h.ctx);
    const cleared = await endpointOf(merchant, endpoint.id);
    assert.equal(cleared.failing, false, 'a success clears the flag');
    assert.equal(cleared.failing_since, null);

    // Redelivery of a failed event: a fresh delivery that succeeds takes it off the failed list.
    const event = failed.find((e) => e.service_transaction_id === first);
    const res = await h.request({
      method: 'POST',
      url: `/v1/events/${event?.id}/redeliver`,
      key: merchant.test_key,
    });
    assert.equal(res.statusCode, 200, res.body);
    const pending = json<{ deliveries: { status: string; superseded_by: string | null }[] }>(res);
    assert.deepEqual(pending.deliveries.map((d) => d.status).sort(), ['failed', 'pending']);
    const again = await h.request({
      method: 'POST',
      url: `/v1/events/${event?.id}/redeliver`,
      key: merchant.test_key,
    });
    assert.equal(json<{ deliveries: unknown[] }>(again).deliveries.length, 2, 'redeliver twice: queued once');
    const before = r.received.length;
    await runDueWebhooks(h.ctx);
    assert.equal(r.received.length, before + 1);
    assert.equal(JSON.parse(r.received.at(-1)?.body ?? '{}').event_id, event?.id);
    assert.deepEqual(
      (await failedEvents(merchant)).map((e) => e.service_transaction_id).sort(),
      [second, third].sort(),
    );
  });

  it('flags a failing callback_url per origin, alerts once, and clears it on success', async () => {
    let up = false;
    const r = await receiver(() => (up ? { status: 204 } : { status: 500 }));
    const merchant = await h.newMerchant();
    const sent = mails.length;
    await createTransaction(merchant, { callback_url: `${r.url}/orders/1` });
    await runSchedule(merchant);
    assert.equal(r.received.length, 5);
    const targets = json<{
      data: { origin: string; failing: boolean; last_failed_url: string; last_alert_at: string }[];
    }>(await h.request({ method: 'GET', url: '/v1/webhook_callback_targets', key: merchant.test_key }));
    assert.equal(targets.data.length, 1);
    assert.equal(targets.data[0]?.origin, r.url);
    assert.equal(targets.data[0]?.failing, true);
    assert.equal(targets.data[0]?.last_failed_url, `${r.url}/orders/1`);
    assert.ok(targets.data[0]?.last_alert_at);
    assert.equal(mails.length, sent + 1);
    assert.deepEqual(mails.at(-1)?.to, [await emailOf(merchant)]);

    await createTransaction(merchant, { callback_url: `${r.url}/orders/2` });
    await runSchedule(merchant);
    assert.equal(mails.length, sent + 1, 'same origin: no second alert within 24 hours');

    up = true;
    await createTransaction(merchant, { callback_url: `${r.url}/orders/3` });
    await runDueWebhooks(h.ctx);
    const after = json<{ data: { failing: boolean }[] }>(
      await h.request({ method: 'GET', url: '/v1/webhook_callback_targets', key: merchant.test_key }),
    );
    assert.equal(after.data[0]?.failing, false);
  });

  it('keeps the alert without SMTP: logged by the mailer, kept on the endpoint', async () => {
    const mailer = h.ctx.mailer;
    const logged: object[] = [];
    h.ctx.mailer = createMailer({ smtpUrl: undefined, from: 'x', logger: { info: (d) => logged.push(d) } });
    try {
      const r = await receiver(() => ({ status: 500 }));
      const merchant = await h.newMerchant();
      const endpoint = json<Endpoint>(
        await h.request({
          method: 'POST',
          url: '/v1/webhook_endpoints',
          key: merchant.test_key,
          payload: { url: r.url },
        }),
      );
      const sent = mails.length;
      await createTransaction(merchant);
      await runSchedule(merchant);
      const flagged = await endpointOf(merchant, endpoint.id);
      assert.equal(flagged.failing, true);
      assert.ok(flagged.last_alert_at);
      assert.equal(mails.length, sent);
      assert.equal(logged.length, 1);
      assert.deepEqual((logged[0] as { to: string }).to, await emailOf(merchant));
    } finally {
      h.ctx.mailer = mailer;
    }
  });
});
