import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { type Harness, json } from '../helpers/harness.ts';

/** Card 4242… pays and takes refunds; 4000 0000 0000 5126 pays but its refunds fail. */
export const GOOD_CARD = '4242424242424242';
export const REFUND_FAILS_CARD = '4000000000005126';

export type Body = Record<string, unknown>;

/** Requests a refunds test makes, with the harness merchant's test key unless another is given. */
export function client(h: () => Harness) {
  const post = (url: string, payload: Body = {}, key?: string, headers?: Record<string, string>) =>
    h().request({ method: 'POST', url, payload, key, headers });
  const get = (url: string, key?: string) => h().request({ method: 'GET', url, key });

  /** A transaction paid by card (reserved), or delivered too. */
  async function paid(
    options: { amount?: number; card?: string; deliver?: boolean; key?: string; body?: Body } = {},
  ): Promise<string> {
    const created = await post(
      '/v1/transactions',
      { amount: options.amount ?? 1000, title: 'Desk lamp', ...options.body },
      options.key,
    );
    assert.equal(created.statusCode, 201, created.body);
    const id = String(json(created).service_transaction_id);
    const pay = await post(
      `/v1/test_helpers/transactions/${id}/pay`,
      { method: 'card', card_number: options.card ?? GOOD_CARD },
      options.key,
    );
    assert.equal(json(pay).status, 'reserved', pay.body);
    if (options.deliver) {
      const delivered = await post(`/v1/transactions/${id}/deliver`, {}, options.key);
      assert.equal(json(delivered).status, 'delivered', delivered.body);
    }
    return id;
  }

  const refund = (payload: Body, key?: string, headers?: Record<string, string>) =>
    post('/v1/refunds', payload, key, headers);

  /** Moves the test clock; the answer comes once every job due by then has run. */
  async function advance(seconds: number, key?: string): Promise<Body> {
    const res = await post('/v1/test_helpers/clock/advance', { seconds }, key);
    assert.equal(res.statusCode, 200, res.body);
    return json(res);
  }

  const transaction = async (id: string, key?: string) => json(await get(`/v1/transactions/${id}`, key));

  /** The payloads of this merchant's events of a type about one transaction (GET /v1/events). */
  async function events(type: string, transactionId: string, key?: string): Promise<Body[]> {
    const res = await get(`/v1/events?type=${type}&service_transaction_id=${transactionId}`, key);
    assert.equal(res.statusCode, 200, res.body);
    return json<{ data: { payload: Body }[] }>(res).data.map((e) => e.payload);
  }

  return { post, get, paid, refund, advance, transaction, events };
}

export function body(res: LightMyRequestResponse): Body {
  return json(res);
}
