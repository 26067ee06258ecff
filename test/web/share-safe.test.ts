import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { linkToken } from '../../src/domain/link-tokens.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { type Harness, json, startHarness } from '../helpers/harness.ts';
import {
  buyerTokenFor,
  createPurchase,
  getPage,
  payByHelper,
  postForm,
  tablesContaining,
} from './helpers.ts';

/** Resolutions 6: a payment link is share-safe. One test per property. */
describe('share-safe payment links', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ publicUrl: 'https://pay.example.test' });
  });
  after(() => h.close());

  let n = 0;
  const pii = () => ({
    title: 'Laptop',
    amount: 98765.43,
    merchant_reference: `ref-SECRET-7731-${++n}`,
    merchant_order_id: 'order-SECRET-5520',
    customer: { name: 'Achieng Otieno', phone: '+254722334455', email: 'achieng@example.org' },
    seller: {
      name: 'Duka Electronics',
      email: 'seller-private@example.org',
      merchant_id: 'seller-SECRET-42',
    },
    metadata: { note: 'meta-SECRET-value', cart: 'cart-SECRET-9' },
  });
  const SECRETS = [
    'ref-SECRET-7731',
    'order-SECRET-5520',
    'Achieng',
    'Otieno',
    '722334455',
    '4455',
    'achieng@example.org',
    'seller-private@example.org',
    'seller-SECRET-42',
    'meta-SECRET-value',
    'cart-SECRET-9',
  ];
  const assertNoSecrets = (text: string, where: string) => {
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} shows ${secret}`);
  };

  it('tokens carry at least 128 bits: 43 base64url characters of a 256-bit HMAC, different for every link', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { token } = await createPurchase(h, { title: 'Same title', amount: 10 });
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(token, 'base64url').length * 8, 256);
      tokens.add(token);
    }
    assert.equal(tokens.size, 20);
    // Keyed by the service secret: the same link id under another secret gives another token.
    assert.notEqual(linkToken('secret-a', 'plink_x'), linkToken('secret-b', 'plink_x'));
  });

  it('stores tokens only hashed: payment_links and transactions hold SHA-256 hashes, never a token', async () => {
    const p = await createPurchase(h, pii());
    const buyer = await buyerTokenFor(h, p.id);
    await payByHelper(h, p.id, { method: 'mobile_money', phone: '+254700000000' });
    for (const token of [p.token, buyer]) {
      const found = await tablesContaining(h, token);
      assert.ok(!found.includes('payment_links') && !found.includes('transactions'), found.join());
    }
    const stored = await h.ctx.db.query<{ buyer_token_hash: string }>(
      'SELECT buyer_token_hash FROM transactions WHERE id = $1',
      [p.id],
    );
    assert.equal(stored.rows[0]?.buyer_token_hash, createHash('sha256').update(buyer).digest('hex'));
    const { rows } = await h.ctx.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM payment_links WHERE transaction_id = $1',
      [p.id],
    );
    assert.deepEqual(
      rows.map((r) => r.token_hash),
      [createHash('sha256').update(p.token).digest('hex')],
    );
  });

  it('puts no personal data and no amount in the URL: only the public address and the token', async () => {
    const p = await createPurchase(h, pii());
    assert.equal(p.paymentLink, `https://pay.example.test/pay/${p.token}`);
    const link = json(
      await h.request({
        method: 'POST',
        url: '/v1/payment_links',
        payload: { service_transaction_id: p.id },
      }),
    );
    const url = String(link.url);
    assert.match(url, /^https:\/\/pay\.example\.test\/pay\/[A-Za-z0-9_-]{43}$/);
    for (const value of [p.paymentLink, url]) {
      assertNoSecrets(value, 'the URL');
      for (const amount of ['98765', '9876543', '98,765'])
        assert.ok(!value.includes(amount), `URL has ${amount}`);
      assert.ok(!value.includes(p.id), 'URL has the transaction id');
    }
  });

  it('shows only title, amount, seller name and terms: no buyer details, references, metadata or ids, in every state', async () => {
    const p = await createPurchase(h, pii());
    const pages: [string, LightMyRequestResponse][] = [['payable', await getPage(h, `/pay/${p.token}`)]];
    assert.match(pages[0]?.[1].body ?? '', /Laptop/);
    assert.match(pages[0]?.[1].body ?? '', /KES\u00a098,765\.43/);
    assert.match(pages[0]?.[1].body ?? '', /Duka Electronics/);

    await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254700001032' });
    pages.push(
      ['processing', await getPage(h, `/pay/${p.token}`)],
      ['status', await getPage(h, `/pay/${p.token}/status`)],
    );
    h.clock.advance(60);
    await runDueJobs(h.ctx);
    pages.push(['failed', await getPage(h, `/pay/${p.token}`)]);
    await payByHelper(h, p.id, { method: 'card', card_number: '4242424242424242' });
    pages.push(
      ['paid', await getPage(h, `/pay/${p.token}`)],
      ['paid status', await getPage(h, `/pay/${p.token}/status`)],
    );
    for (const [where, res] of pages) {
      assertNoSecrets(res.body, where);
      assert.ok(!res.body.includes(p.id), `${where} shows the transaction id`);
      assert.ok(!res.body.includes(h.merchant.merchant_id), `${where} shows the merchant id`);
    }
  });

  it('cannot confirm or dispute: no such routes under /pay, and the payment token does not open the buyer page', async () => {
    const p = await createPurchase(h);
    await payByHelper(h, p.id, { method: 'card', card_number: '4242424242424242' });
    for (const action of ['confirm', 'dispute', 'release', 'cancel', 'refund']) {
      const res = await postForm(h, `/pay/${p.token}/${action}`);
      assert.equal(res.statusCode, 404, action);
      assert.equal(json<{ error: { code: string } }>(res).error.code, 'not_found');
    }
    assert.equal((await getPage(h, `/buyer/${p.token}`)).statusCode, 404);
    assert.equal((await postForm(h, `/buyer/${p.token}/confirm`)).statusCode, 404);
    const t = json(await h.request({ method: 'GET', url: `/v1/transactions/${p.id}` }));
    assert.equal(t.status, 'reserved');
    assert.equal(t.settlement_status, 'pending_confirmation');
    // Nor does the buyer token pay.
    const buyer = await buyerTokenFor(h, p.id);
    assert.equal((await getPage(h, `/pay/${buyer}`)).statusCode, 404);
  });

  it('sends pages with a nonce CSP, no framing, no referrer and no caching', async () => {
    const p = await createPurchase(h);
    const first = await getPage(h, `/pay/${p.token}`);
    const second = await getPage(h, `/pay/${p.token}`);
    for (const res of [first, second]) {
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
      assert.ok(nonce);
      assert.ok(res.body.includes(`<script nonce="${nonce}">`));
      assert.ok(res.body.includes(`<style nonce="${nonce}">`));
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(!/<(script|style)>/.test(res.body), 'every script and style carries the nonce');
    }
    assert.notEqual(first.headers['content-security-policy'], second.headers['content-security-policy']);
  });

  it('sends the same protective headers on not-found pages, redirects, JSON and buyer pages', async () => {
    const p = await createPurchase(h);
    const buyer = await buyerTokenFor(h, p.id);
    const responses = [
      await getPage(h, `/pay/${'Z'.repeat(43)}`),
      await postForm(h, `/pay/${p.token}/mobile-money`, { phone: '+254700000000' }),
      await getPage(h, `/pay/${p.token}/status`),
      await getPage(h, '/pay/short/status'),
      await getPage(h, `/buyer/${buyer}`),
      await getPage(h, `/buyer/${'Z'.repeat(43)}`),
    ];
    for (const res of responses) {
      assert.equal(res.headers['referrer-policy'], 'no-referrer', `${res.statusCode}`);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
  });
});
