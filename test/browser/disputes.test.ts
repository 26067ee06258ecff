import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { createOperatorKey } from '../../src/operations/manage-keys.ts';
import { ARTIFACTS, browserSuite, paidDeliveredWithToken, SKIP, WAIT } from './chromium.ts';

/**
 * Disputes end to end in Debian's Chromium, on a phone-sized screen, against a real server with
 * its worker: the buyer opens a dispute with a photo on the buyer page; the operator signs in to
 * the console, opens the case, sees the photo, decides a split and sees the outcome. Screenshots
 * of each screen go to test-artifacts/.
 */

/** A 16×16 PNG (a red square) the buyer uploads as evidence. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR42mO4YGBAEmIY1TCqYfhqAAA+XjAQecrJFAAAAABJRU5ErkJggg==',
  'base64',
);

describe('disputes in Chromium: the buyer opens one, the operator decides it', { skip: SKIP }, () => {
  const suite = browserSuite();
  const { openTab, screenshot, finish } = suite;
  let operatorKey: string;
  let pngPath: string;
  /** Set by the buyer's scenario, decided by the operator's. */
  let opened: { transactionId: string; disputeId: string; token: string } | undefined;

  before(async () => {
    pngPath = `${ARTIFACTS}evidence-upload.png`;
    writeFileSync(pngPath, PNG);
    operatorKey = (await createOperatorKey(suite.server.ctx)).key;
  });

  async function transaction(id: string): Promise<Record<string, unknown>> {
    return (await suite.server.api({ method: 'GET', url: `/v1/transactions/${id}` })).json() as Record<
      string,
      unknown
    >;
  }

  /** A paid, delivered test purchase and its buyer-page token. */
  async function deliveredPurchase(): Promise<{ id: string; token: string }> {
    const created = await suite.server.api({
      method: 'POST',
      url: '/v1/transactions',
      payload: {
        amount: 2000,
        currency: 'KES',
        title: 'Wooden coffee table',
        seller: { name: 'Kibanda Furniture' },
        customer: { name: 'Amina Odhiambo', email: 'amina@example.com' },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = (created.json() as { service_transaction_id: string }).service_transaction_id;
    return { id, token: await paidDeliveredWithToken(suite.server, id) };
  }

  it('the buyer opens a dispute with a photo on the buyer page and sees it', async () => {
    const { id, token } = await deliveredPurchase();
    const page = await openTab();
    await page.goto(`${suite.server.url}/buyer/${token}`);
    await screenshot(page, 'dispute-buyer-before');
    await page.getByLabel('What went wrong?').selectOption('damaged');
    await page
      .getByLabel('Describe the problem')
      .fill('The table top arrived with a deep scratch across it.');
    await page.getByLabel('Photo or document (optional)').setInputFiles(pngPath);
    await screenshot(page, 'dispute-buyer-form');
    await page.getByRole('button', { name: 'Open a dispute' }).click();
    await page.getByRole('heading', { name: 'Your dispute' }).waitFor(WAIT);
    const section = page.locator('section[aria-labelledby="your-dispute-title"]');
    const shown = String(await section.textContent());
    assert.match(shown, /Dispute open: your money stays held/);
    assert.match(shown, /The table top arrived with a deep scratch across it\./);
    assert.match(shown, /It arrived damaged/);
    const upload = section.getByRole('link', { name: 'evidence-upload.png' });
    assert.equal(await upload.count(), 1, 'the buyer sees the photo they sent');
    const own = await page.request.get(`${suite.server.url}${await upload.getAttribute('href')}`);
    assert.equal(own.status(), 200);
    assert.deepEqual(await own.body(), PNG);
    const disputes = (
      await suite.server.api({ method: 'GET', url: `/v1/disputes?service_transaction_id=${id}` })
    ).json() as {
      data: { id: string }[];
    };
    const [dispute] = disputes.data;
    assert.ok(dispute, 'the dispute exists');
    opened = { transactionId: id, disputeId: dispute.id, token };
    assert.equal((await transaction(id)).status, 'disputed');
    await finish(page, 'dispute-buyer-opened');
  });

  it('the operator signs in, opens the case, sees the photo, decides a split and sees the outcome', async () => {
    assert.ok(opened, 'the buyer opened a dispute');
    const { disputeId, transactionId, token } = opened;
    const page = await openTab();
    await page.goto(`${suite.server.url}/operator`);
    await page.getByRole('heading', { name: 'Operator sign-in' }).waitFor(WAIT);
    await screenshot(page, 'operator-sign-in');
    await page.getByLabel('Operator key').fill(operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dispute queue' }).waitFor(WAIT);
    await screenshot(page, 'operator-queue');

    await page.getByRole('link', { name: disputeId }).click();
    await page.getByRole('heading', { name: `Dispute ${disputeId}` }).waitFor(WAIT);
    const photo = page.locator('#evidence-buyer ~ ol img.evidence').first();
    await photo.waitFor(WAIT);
    // Loaded and decoded: the <img> request carried the session cookie and the PNG came back whole.
    const loaded = await photo.evaluate((img) => {
      const image = img as unknown as { complete: boolean; naturalWidth: number };
      return image.complete && image.naturalWidth;
    });
    assert.equal(loaded, 16, 'the buyer’s photo shows in the case page');
    const download = page.locator('#evidence-buyer ~ ol a[download]').first();
    assert.equal(await download.textContent(), 'evidence-upload.png');
    const href = String(await download.getAttribute('href'));
    const file = await page.request.get(`${suite.server.url}${href}`);
    assert.equal(file.status(), 200);
    assert.deepEqual(await file.body(), PNG);
    assert.match(String(file.headers()['content-disposition']), /^attachment;/);
    await screenshot(page, 'operator-case');

    await page.getByLabel('Split').check();
    await page.getByLabel('To the seller (KES)').fill('1200');
    await page
      .getByLabel('Note with the outcome')
      .fill('The table has a scratch; most of the price goes to the seller.');
    await page.getByRole('button', { name: 'Record decision' }).click();
    await page.getByRole('heading', { name: 'Decision recorded' }).waitFor(WAIT);
    const outcome = String(await page.locator('section[aria-labelledby="outcome-title"]').textContent());
    assert.match(outcome, /Outcome: Split/);
    assert.match(outcome, /KES\u00a01,200\.00/);
    assert.match(outcome, /KES\u00a0800\.00/);
    assert.equal(await page.getByRole('button', { name: 'Record decision' }).count(), 0);

    const t = await transaction(transactionId);
    assert.equal(t.status, 'confirmed');
    assert.equal(t.amount_released, 1200);
    assert.equal(t.amount_refunded, 800);
    await screenshot(page, 'operator-case-resolved');

    // The buyer's page now tells the outcome.
    await page.goto(`${suite.server.url}/buyer/${token}`);
    await page.getByText('Dispute decided').waitFor(WAIT);
    assert.match(
      String(await page.locator('section[aria-labelledby="your-dispute-title"]').textContent()),
      /KES\u00a0800\.00 is refunded to you and KES\u00a01,200\.00 goes to the seller/,
    );
    await finish(page, 'dispute-buyer-decided');
  });
});
