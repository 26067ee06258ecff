import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { createMailer } from '../../src/mail/mailer.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';

describe('the buyer page link is e-mailed once the payment is held', () => {
  let h: Harness;
  let smtp: SMTPServer;
  const received: { to: string[]; body: string }[] = [];

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
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), body });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    h = await startHarness();
    h.ctx.mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      from: 'Safehold <no-reply@example.com>',
      logger: { info: () => {} },
    });
  });
  after(async () => {
    await h.close();
    await new Promise<void>((resolve) => smtp.close(resolve));
  });

  it('sends customer.email the buyer_link after capture, and nothing before', async () => {
    const created = json(
      await h.request({
        method: 'POST',
        url: '/v1/transactions',
        payload: { amount: 250, title: 'Rain jacket', customer: { email: 'buyer@example.com' } },
      }),
    );
    const id = String(created.service_transaction_id);
    await runDueJobs(h.ctx);
    assert.equal(received.length, 0);

    const paid = await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${id}/pay`,
      payload: { method: 'card', card_number: '4242424242424242' },
    });
    assert.equal(json(paid).status, 'reserved');
    await runDueJobs(h.ctx);
    assert.equal(received.length, 1);
    assert.deepEqual(received[0]?.to, ['buyer@example.com']);
    const body = (received[0]?.body ?? '').replace(/=\r?\n/g, '');
    assert.ok(body.includes(String(created.buyer_link)), 'the mail carries the buyer_link');
    assert.ok(!body.includes(String(created.payment_link)), 'and not the payment link');

    await runDueJobs(h.ctx);
    assert.equal(received.length, 1, 'sent once');
  });

  it('sends nothing for a transaction without customer.email', async () => {
    const before = received.length;
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 10, title: 'Pen' } }),
    );
    await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${created.service_transaction_id}/pay`,
      payload: { method: 'card', card_number: '4242424242424242' },
    });
    await runDueJobs(h.ctx);
    assert.equal(received.length, before);
  });
});
