import type { AttemptSummary, Checkout } from '../operations/checkout.ts';
import { payPath } from './checkout-page.ts';
import { formatMoney } from './format.ts';
import { html } from './html.ts';
import type { Page } from './layout.ts';
import { PAGE_SCRIPT } from './scripts.ts';

/**
 * The test-mode stand-in for a bank's 3-D Secure page (GET /pay/{token}/challenge/{attemptId}):
 * clearly labelled as a test, with buttons to approve or fail the check.
 */
export function challengePage(token: string, checkout: Checkout, attempt: AttemptSummary): Page {
  const action = `${payPath(token)}/challenge/${encodeURIComponent(attempt.id)}`;
  return {
    status: 200,
    title: 'Test 3-D Secure check',
    testMode: true,
    script: PAGE_SCRIPT,
    footer: 'Test 3-D Secure page of the Safehold card simulator.',
    body: html`<section class="card challenge-frame" aria-labelledby="challenge-title">
<p><span class="badge">TEST</span></p>
<h1 id="challenge-title" tabindex="-1" data-autofocus>Test 3-D Secure check</h1>
<p>This page stands in for your bank's security check. It is a <strong>test page</strong>: no bank is involved and no real money moves.</p>
<dl class="facts">
<dt>Merchant</dt><dd>${checkout.sellerName}</dd>
<dt>Amount</dt><dd>${formatMoney(checkout.amountMinor, checkout.currency)}</dd>
<dt>Card</dt><dd>ending ${attempt.last4}</dd>
</dl>
<form method="post" action="${action}">
<input type="hidden" name="outcome" value="approve">
<button type="submit">Approve (test)</button>
</form>
<form method="post" action="${action}">
<input type="hidden" name="outcome" value="fail">
<button type="submit" class="danger">Fail (test)</button>
</form>
</section>`,
  };
}
