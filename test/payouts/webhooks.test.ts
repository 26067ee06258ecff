import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import { advance, approvedTransaction, listPayouts, post } from './helpers.ts';

describe('payout events reach webhook endpoints, and the API documents payouts', () => {
  let h: Harness;
  let server: Server;
  let url = '';
  const received: Array<Record<string, unknown> & { data: Record<string, unknown> }> = [];
  before(async () => {
    h = await startHarness();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  after(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends payout.paid and payout.failed (a failure, then a reversal) to an endpoint that asked for them', async () => {
    const m = await h.newMerchant();
    const key = m.test_key;
    const endpoint = await post(
      h,
      '/v1/webhook_endpoints',
      { url, enabled_events: ['payout.paid', 'payout.failed'] },
      key,
    );
    assert.equal(endpoint.statusCode, 201, endpoint.body);
    await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254700000001', schedule: 'instant' },
      key,
    );
    const t = await approvedTransaction(h, { amount: 64, merchant_reference: 'hook-1' }, key);
    await advance(h, 1, key);
    await post(
      h,
      '/v1/payout_settings',
      { method: 'mobile_money', phone: '+254711223344', schedule: 'instant' },
      key,
    );
    await advance(h, 1, key);
    const [paid] = (await listPayouts(h, '?status=paid', key)).data;
    assert.ok(paid);
    const reversed = await post(h, `/v1/test_helpers/payouts/${paid.id}/reverse`, {}, key);
    assert.equal(reversed.statusCode, 200, reversed.body);
    await advance(h, 1, key);

    assert.deepEqual(
      received.map((e) => [e.event_type, e.data.status]),
      [
        ['payout.failed', 'failed'],
        ['payout.paid', 'paid'],
        ['payout.failed', 'reversed'],
      ],
    );
    for (const event of received) {
      assert.equal(event.service_transaction_id, null);
      assert.equal(event.merchant_reference, null);
      assert.equal(event.data.object, 'payout');
      assert.equal(event.data.destination, event.data.status === 'failed' ? '****0001' : '****3344');
      assert.deepEqual(event.data.lines, [
        {
          service_transaction_id: t.service_transaction_id,
          merchant_reference: 'hook-1',
          merchant_order_id: null,
          amount: 64,
          amount_minor: 6400,
        },
      ]);
    }
    assert.equal(received[2]?.data.id, paid.id);
    assert.match(String(received[2]?.data.failure_reason), /reversed/);
  });

  it('lists every payout route in the OpenAPI document', async () => {
    const doc = json<{ paths: Record<string, Record<string, unknown>> }>(
      await h.request({ method: 'GET', url: '/v1/openapi.json', key: null }),
    );
    for (const [path, method] of [
      ['/v1/payout_settings', 'get'],
      ['/v1/payout_settings', 'post'],
      ['/v1/payouts', 'get'],
      ['/v1/payouts/{id}', 'get'],
      ['/v1/payouts/{id}/lines', 'get'],
      ['/v1/test_helpers/payouts/{id}/reverse', 'post'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
    }
  });
});
