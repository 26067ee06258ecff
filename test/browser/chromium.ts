import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { buyerToken, tokenHash } from '../../src/domain/link-tokens.ts';
import { type LiveServer, startLiveServer } from './live-server.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The reason the browser suites are skipped (pass it as `describe`'s `skip`), or false. */
export const SKIP = existsSync(CHROMIUM)
  ? false
  : 'Chromium not found at /usr/bin/chromium: browser tests skipped; apt-get install chromium';
if (SKIP) console.log(SKIP);

/** Where screenshots (and files the browser uploads) go. */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
export const WAIT = { timeout: 20_000 };

export interface BrowserSuite {
  readonly server: LiveServer;
  readonly browser: Browser;
  /** A fresh tab on a phone-sized screen that records script errors and CSP violations. */
  openTab(): Promise<Page>;
  /** Saves a full-page screenshot as test-artifacts/NAME.png. */
  screenshot(page: Page, name: string): Promise<void>;
  /** The tab's last screenshot; then it closes, and no script error or CSP violation was seen. */
  finish(page: Page, name: string): Promise<void>;
}

/**
 * Debian's Chromium against a live server with its worker, for the surrounding describe: started
 * by a `before` hook (the suite's own hooks run after it) and closed by an `after` hook.
 */
export function browserSuite(): BrowserSuite {
  let server: LiveServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let problems: string[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the browser suite is used before its before hook ran');
    return value;
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startLiveServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
  });

  const screenshot = async (page: Page, name: string) => {
    await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  };
  return {
    get server() {
      return started(server);
    },
    get browser() {
      return started(browser);
    },
    async openTab() {
      problems = [];
      const page = await started(context).newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      return page;
    },
    screenshot,
    async finish(page, name) {
      await screenshot(page, name);
      await page.close();
      assert.deepEqual(problems, [], 'no script errors or CSP violations');
    },
  };
}

/**
 * Pays a test transaction by card and marks it delivered; returns its buyer-page token, with the
 * token's hash written on the row the way the buyer page looks it up.
 */
export async function paidDeliveredWithToken(server: LiveServer, id: string): Promise<string> {
  const paid = await server.api({
    method: 'POST',
    url: `/v1/test_helpers/transactions/${id}/pay`,
    payload: { method: 'card', card_number: '4242424242424242' },
  });
  assert.equal(paid.statusCode, 200, paid.body);
  const delivered = await server.api({ method: 'POST', url: `/v1/transactions/${id}/deliver` });
  assert.equal(delivered.statusCode, 200, delivered.body);
  const token = buyerToken(server.ctx.linkSecret, id);
  await server.ctx.db.query('UPDATE transactions SET buyer_token_hash = $1 WHERE id = $2', [
    tokenHash(token),
    id,
  ]);
  return token;
}
