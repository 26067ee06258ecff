import type { AttemptSummary, Checkout, FieldErrors } from '../operations/checkout.ts';
import { formatMoney } from './format.ts';
import { type HtmlValue, html, raw, type SafeHtml } from './html.ts';
import type { Page } from './layout.ts';
import { protectionTerms, reviewWindowText } from './protection.ts';
import { PAGE_SCRIPT } from './scripts.ts';

/**
 * The checkout page behind a payment link (GET /pay/{token}), one renderer per state. It shows
 * only the title, amount, seller name, protection terms and the payment's own progress.
 */

const SHARE_FOOTER =
  'This payment link shows no personal details and can only pay for this purchase. Safehold holds the money until the conditions above are met.';

export interface FormState {
  errors?: FieldErrors;
  /** A message about the whole form (a payment the rail refused to start). */
  message?: string;
  phone?: string;
}

const SHIELD_ICON = raw(
  '<svg aria-hidden="true" width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M12 22s8-4 8-10V5l-8-3-8 3v7c0 6 8 10 8 10z"/><path d="m9 12 2 2 4-4"/></svg>',
);

export const payPath = (token: string) => `/pay/${encodeURIComponent(token)}`;

function page(
  checkout: Checkout,
  status: number,
  title: string,
  body: SafeHtml,
  extra: Partial<Page> = {},
): Page {
  return {
    status,
    title,
    body,
    script: PAGE_SCRIPT,
    testMode: !checkout.livemode,
    footer: SHARE_FOOTER,
    ...extra,
  };
}

function summary(checkout: Checkout, heading: 'h1' | 'h2', shield = false): SafeHtml {
  const title =
    heading === 'h1'
      ? html`<h1 id="summary-title">${checkout.title}</h1>`
      : html`<h2 id="summary-title">${checkout.title}</h2>`;
  return html`<section class="card" aria-labelledby="summary-title">
${title}
<p class="amount">${formatMoney(checkout.amountMinor, checkout.currency)}</p>
<dl class="facts"><dt>Seller</dt><dd>${checkout.sellerName}</dd></dl>
${shield ? html`<p class="shield">${SHIELD_ICON}<span><strong>Protected payment.</strong> Safehold holds your money and pays ${checkout.sellerName} only on the terms below.</span></p>` : null}
</section>`;
}

function protection(checkout: Checkout, paid: boolean): SafeHtml {
  return html`<section class="card" aria-labelledby="protection-title">
<h2 id="protection-title">How your money is protected</h2>
${protectionTerms(checkout.terms, checkout.sellerName, paid)}
</section>`;
}

function fieldError(id: string, message: string | undefined): HtmlValue {
  return message ? html`<p class="field-error" id="${id}-error">${message}</p>` : null;
}

function describedBy(id: string, hint: boolean, message: string | undefined): string {
  return [hint ? `${id}-hint` : '', message ? `${id}-error` : ''].filter(Boolean).join(' ');
}

function input(options: {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  attrs: SafeHtml;
  value?: string;
}): SafeHtml {
  const { id, label, hint, error } = options;
  const by = describedBy(id, hint !== undefined, error);
  return html`<div>
<label for="${id}">${label}</label>
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : null}
<input id="${id}" name="${id}" ${options.attrs}${by ? html` aria-describedby="${by}"` : null}${error ? html` aria-invalid="true"` : null}${options.value ? html` value="${options.value}"` : null}>
${fieldError(id, error)}
</div>`;
}

function failureNotice(attempt: AttemptSummary | null): HtmlValue {
  if (attempt?.status !== 'failed') return null;
  const how = attempt.method === 'card' ? `Card ending ${attempt.last4}` : `Phone ending ${attempt.last4}`;
  return html`<div class="notice error" role="alert">
<h2 id="failure-title" tabindex="-1" data-autofocus>The payment did not go through</h2>
<p>${how}: ${attempt.failureMessage ?? 'the payment failed.'}</p>
<p>You have not been charged. You can try again below.</p>
</div>`;
}

function testHints(checkout: Checkout): HtmlValue {
  if (checkout.livemode) return null;
  return html`<details>
<summary>Test phone numbers and cards</summary>
<ul class="terms">
<li>Any phone number succeeds, except numbers ending 0001 (insufficient funds), 1032 (cancelled on the phone), 1037 (no answer) and 2001 (wrong PIN).</li>
<li>Card 4242 4242 4242 4242 succeeds; 4000 0000 0000 0002 is declined; 4000 0000 0000 9995 has insufficient funds; 4000 0000 0000 3220 asks for the 3-D Secure check. Any future expiry and any CVC.</li>
</ul>
</details>`;
}

/** The payable page: summary, terms, and the two ways to pay. */
export function payablePage(token: string, checkout: Checkout, form: FormState = {}, status = 200): Page {
  const amount = formatMoney(checkout.amountMinor, checkout.currency);
  const errors = form.errors ?? {};
  const hasErrors = Object.keys(errors).length > 0 || form.message !== undefined;
  const errorSummary: HtmlValue = hasErrors
    ? html`<div class="notice error" role="alert">
<h2 id="error-title" tabindex="-1" data-autofocus>Please check the payment details</h2>
${form.message ? html`<p>${form.message}</p>` : null}
${Object.entries(errors).map(([field, e]) => html`<p><a href="#${field}">${e}</a></p>`)}
</div>`
    : failureNotice(checkout.lastAttempt);
  const base = payPath(token);
  return page(
    checkout,
    status,
    `Pay ${checkout.title}`,
    html`${errorSummary}
${summary(checkout, 'h1', true)}
<section class="card" aria-labelledby="pay-title">
<h2 id="pay-title">Pay</h2>
<form method="post" action="${base}/mobile-money" aria-labelledby="mm-title">
<h3 id="mm-title">Mobile money</h3>
${input({
  id: 'phone',
  label: 'Phone number',
  hint: 'International format with the country code, for example +254 712 345 678. You approve the payment on this phone.',
  error: errors.phone,
  value: form.phone,
  attrs: html`type="tel" inputmode="tel" autocomplete="tel" required`,
})}
<button type="submit">Pay ${amount} by mobile money</button>
</form>
<p class="or">or</p>
<form method="post" action="${base}/card" aria-labelledby="card-title">
<h3 id="card-title">Card</h3>
${input({
  id: 'card_number',
  label: 'Card number',
  error: errors.card_number,
  attrs: html`type="text" inputmode="numeric" autocomplete="cc-number" required`,
})}
<div class="row">
${input({
  id: 'expiry',
  label: 'Expiry (MM/YY)',
  error: errors.expiry,
  attrs: html`type="text" inputmode="numeric" autocomplete="cc-exp" placeholder="MM/YY" required`,
})}
${input({
  id: 'cvc',
  label: 'CVC',
  error: errors.cvc,
  attrs: html`type="text" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required`,
})}
</div>
<button type="submit">Pay ${amount} by card</button>
</form>
${testHints(checkout)}
</section>
${protection(checkout, false)}`,
  );
}

/** A payment is on its way: approve on the phone; the script follows the status endpoint. */
export function processingPage(token: string, checkout: Checkout): Page {
  const attempt = checkout.lastAttempt;
  const amount = formatMoney(checkout.amountMinor, checkout.currency);
  const isPhone = attempt?.method !== 'card';
  return page(
    checkout,
    200,
    isPhone ? 'Approve on your phone' : 'Processing your payment',
    html`<section class="card" aria-labelledby="status-title">
<div class="spinner" aria-hidden="true"></div>
<h1 id="status-title" tabindex="-1" data-autofocus>${isPhone ? 'Approve the payment on your phone' : 'Processing your card payment'}</h1>
${
  isPhone
    ? html`<p>We sent a request for <strong>${amount}</strong> to the phone ending <strong>${attempt?.last4 ?? ''}</strong>. Enter your PIN on the phone to approve it.</p>`
    : html`<p>Your card payment of <strong>${amount}</strong> is being processed.</p>`
}
<p id="live-status" role="status" aria-live="polite">Waiting for the result…</p>
<div data-poll="${payPath(token)}/status" data-state="processing" hidden></div>
<noscript><p>This page refreshes by itself. <a href="${payPath(token)}">Refresh now</a>.</p></noscript>
</section>
${summary(checkout, 'h2')}
${protection(checkout, false)}`,
    { refreshWithoutScriptSeconds: 4 },
  );
}

export function requiresActionPage(token: string, checkout: Checkout): Page {
  const attemptId = checkout.lastAttempt?.id ?? '';
  return page(
    checkout,
    200,
    'Confirm with your bank',
    html`<section class="card" aria-labelledby="status-title">
<h1 id="status-title" tabindex="-1" data-autofocus>Confirm the payment with your bank</h1>
<p>Your bank asks you to confirm this card payment (3-D Secure) before it goes through.</p>
<a class="button" href="${payPath(token)}/challenge/${encodeURIComponent(attemptId)}">Continue to the check</a>
</section>
${summary(checkout, 'h2')}
${protection(checkout, false)}`,
  );
}

export function paidPage(checkout: Checkout): Page {
  const amount = formatMoney(checkout.amountMinor, checkout.currency);
  const releasedToSeller =
    checkout.transactionStatus === 'confirmed' || checkout.transactionStatus === 'released';
  const method = checkout.lastAttempt
    ? checkout.lastAttempt.method === 'card'
      ? `Card ending ${checkout.lastAttempt.last4}`
      : `Mobile money, phone ending ${checkout.lastAttempt.last4}`
    : null;
  return page(
    checkout,
    200,
    'Paid',
    html`<div class="notice ok" role="status">
<h1 id="status-title" tabindex="-1" data-autofocus>Paid</h1>
<p>${
      releasedToSeller
        ? html`Your payment of <strong>${amount}</strong> has been released to ${checkout.sellerName}.`
        : html`Your payment of <strong>${amount}</strong> is held safely by Safehold. ${checkout.sellerName} has not been paid yet.`
    }</p>
</div>
<section class="card" aria-labelledby="summary-title">
<h2 id="summary-title">${checkout.title}</h2>
<p class="amount">${amount}</p>
<dl class="facts">
<dt>Seller</dt><dd>${checkout.sellerName}</dd>
${method ? html`<dt>Paid with</dt><dd>${method}</dd>` : null}
<dt>Review window</dt><dd>${reviewWindowText(checkout.terms)}</dd>
</dl>
</section>
${releasedToSeller ? null : protection(checkout, true)}`,
  );
}

export function refundedPage(checkout: Checkout): Page {
  return page(
    checkout,
    200,
    'Refunded',
    html`<div class="notice info" role="status">
<h1 id="status-title" tabindex="-1" data-autofocus>Refunded</h1>
<p>This purchase was cancelled after payment and Safehold is returning the money to you.</p>
</div>
${summary(checkout, 'h2')}`,
  );
}

export function expiredPage(checkout: Checkout): Page {
  return page(
    checkout,
    410,
    'Link expired',
    html`<div class="notice info">
<h1 id="status-title">This payment link has expired</h1>
<p>Nothing was charged. Ask ${checkout.sellerName} for a new payment link if you still want to buy.</p>
</div>
${summary(checkout, 'h2')}`,
  );
}

export function cancelledPage(checkout: Checkout): Page {
  return page(
    checkout,
    410,
    'Purchase cancelled',
    html`<div class="notice info">
<h1 id="status-title">This purchase was cancelled</h1>
<p>No payment is needed and nothing was charged. Contact ${checkout.sellerName} if you think this is a mistake.</p>
</div>
${summary(checkout, 'h2')}`,
  );
}

export function unknownLinkPage(): Page {
  return {
    status: 404,
    title: 'Payment link not found',
    body: html`<div class="notice error">
<h1 id="status-title">Payment link not found</h1>
<p>This link does not open any payment. Check that you copied the whole link, or ask the seller to send it again.</p>
</div>`,
    footer: SHARE_FOOTER,
  };
}

export function checkoutPage(token: string, checkout: Checkout): Page {
  switch (checkout.state) {
    case 'payable':
      return payablePage(token, checkout);
    case 'processing':
      return processingPage(token, checkout);
    case 'requires_action':
      return requiresActionPage(token, checkout);
    case 'paid':
      return paidPage(checkout);
    case 'refunded':
      return refundedPage(checkout);
    case 'expired':
      return expiredPage(checkout);
    case 'cancelled':
      return cancelledPage(checkout);
  }
}
