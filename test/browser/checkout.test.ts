import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, paidDeliveredWithToken, SKIP, WAIT } from './chromium.ts';

/**
 * The checkout and buyer pages in Debian's Chromium, on a phone-sized screen, against a real
 * server with its worker. Each scenario saves a screenshot of its last screen in test-artifacts/.
 */
describe('checkout and buyer pages in Chromium', { skip: SKIP }, () => {
  const suite = browserSuite();
  const { openTab, screenshot, finish } = suite;

  async function createPurchase(body: Record<string, unknown> = {}): Promise<{ id: string; path: string }> {
    const res = await suite.server.api({
      method: 'POST',
      url: '/v1/transactions',
      payload: {
        amount: 1500.5,
        currency: 'KES',
        title: 'Samsung Galaxy A15 (used)',
        seller: { name: 'Kibanda Electronics' },
        ...body,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const t = res.json() as { service_transaction_id: string; payment_link: string };
    return { id: t.service_transaction_id, path: new URL(t.payment_link).pathname };
  }

  async function statusOf(id: string): Promise<string> {
    return (
      (await suite.server.api({ method: 'GET', url: `/v1/transactions/${id}` })).json() as { status: string }
    ).status;
  }

  async function payByPhone(page: Page, phone: string): Promise<void> {
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: /by mobile money/ }).click();
  }

  async function payByCard(page: Page, number: string): Promise<void> {
    await page.getByLabel('Card number').fill(number);
    await page.getByLabel('Expiry (MM/YY)').fill('08/29');
    await page.getByLabel('CVC').fill('123');
    await page.getByRole('button', { name: /by card/ }).click();
  }

  it('pays by a succeeding test phone: the page follows the push to paid', async () => {
    const { id, path } = await createPurchase();
    const page = await openTab();
    await page.goto(`${suite.server.url}${path}`);
    await screenshot(page, 'checkout-start');
    await payByPhone(page, '+254712345678');
    await page.getByRole('heading', { name: 'Paid' }).waitFor(WAIT);
    assert.match(String(await page.locator('main').textContent()), /held safely by Safehold/);
    assert.equal(await statusOf(id), 'reserved');
    await finish(page, 'phone-succeeds');
  });

  it('pays by a phone that cancels, shows why, then pays on retry with a good phone', async () => {
    const { id, path } = await createPurchase();
    const page = await openTab();
    await page.goto(`${suite.server.url}${path}`);
    await payByPhone(page, '+254700001032');
    await page.getByRole('heading', { name: 'The payment did not go through' }).waitFor(WAIT);
    assert.match(String(await page.getByRole('alert').textContent()), /cancelled the payment on the phone/);
    await screenshot(page, 'phone-cancelled');
    assert.equal(await statusOf(id), 'pending_payment');
    await payByPhone(page, '+254700000042');
    await page.getByRole('heading', { name: 'Paid' }).waitFor(WAIT);
    assert.equal(await statusOf(id), 'reserved');
    await finish(page, 'phone-cancelled-then-retry-paid');
  });

  it('pays by card through the test 3-D Secure challenge', async () => {
    const { id, path } = await createPurchase();
    const page = await openTab();
    await page.goto(`${suite.server.url}${path}`);
    await payByCard(page, '4000 0000 0000 3220');
    await page.getByRole('heading', { name: 'Test 3-D Secure check' }).waitFor(WAIT);
    assert.match(page.url(), /\/challenge\/pa_/);
    await screenshot(page, 'card-3ds-challenge');
    await page.getByRole('button', { name: 'Approve (test)' }).click();
    await page.getByRole('heading', { name: 'Paid' }).waitFor(WAIT);
    assert.match(String(await page.locator('main').textContent()), /Card ending 3220/);
    assert.equal(await statusOf(id), 'reserved');
    await finish(page, 'card-3ds-paid');
  });

  it('shows a declined card and keeps the purchase payable', async () => {
    const { id, path } = await createPurchase();
    const page = await openTab();
    await page.goto(`${suite.server.url}${path}`);
    await payByCard(page, '4000000000000002');
    await page.getByRole('heading', { name: 'The payment did not go through' }).waitFor(WAIT);
    assert.match(String(await page.getByRole('alert').textContent()), /The card was declined/);
    assert.equal(await page.getByRole('button', { name: /by card/ }).count(), 1);
    assert.equal(await statusOf(id), 'pending_payment');
    await finish(page, 'card-declined');
  });

  it('works with scripts turned off: plain form posts, and the page refreshes itself until paid', async () => {
    const { id, path } = await createPurchase();
    const noScript = await suite.browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      javaScriptEnabled: false,
    });
    try {
      const page = await noScript.newPage();
      await page.goto(`${suite.server.url}${path}`);
      await payByPhone(page, '+254711000222');
      await page.getByRole('heading', { name: 'Paid' }).waitFor(WAIT);
      assert.equal(await statusOf(id), 'reserved');
      await screenshot(page, 'no-script-phone-paid');
    } finally {
      await noScript.close();
    }
  });

  it('the buyer confirms receipt on the buyer page', async () => {
    const { id } = await createPurchase({ satisfaction_days: 5 });
    const token = await paidDeliveredWithToken(suite.server, id);

    const page = await openTab();
    await page.goto(`${suite.server.url}/buyer/${token}`);
    await screenshot(page, 'buyer-before-confirm');
    await page.getByRole('button', { name: 'Confirm I received it' }).click();
    await page.getByText('Complete: the payment is released to the seller').waitFor(WAIT);
    assert.equal(await page.getByRole('button', { name: 'Confirm I received it' }).count(), 0);
    assert.equal(await statusOf(id), 'confirmed');
    await finish(page, 'buyer-confirmed');
  });
});
