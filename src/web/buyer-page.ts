import type { BuyerView } from '../operations/buyer-actions.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { type HtmlValue, html } from './html.ts';
import type { Page } from './layout.ts';
import { protectionTerms, reviewWindowText } from './protection.ts';
import { PAGE_SCRIPT } from './scripts.ts';

/**
 * The buyer's own page (GET /buyer/{token}): the purchase's status in plain words and the
 * "Confirm I received it" button while the money is held.
 */

const BUYER_FOOTER =
  'This is your private buyer page. Do not share its link: anyone who has it can confirm receipt for you.';

export const buyerPath = (token: string) => `/buyer/${encodeURIComponent(token)}`;

export interface BuyerNotice {
  kind: 'ok' | 'error' | 'info';
  heading: string;
  text: string;
}

function statusWords(view: BuyerView): { heading: string; text: string } {
  const amount = formatMoney(view.amountMinor, view.currency);
  switch (view.status) {
    case 'pending_payment':
      return { heading: 'Waiting for payment', text: 'This purchase has not been paid yet.' };
    case 'reserved':
      return {
        heading: 'Paid: your money is held by Safehold',
        text: `${view.sellerName} has not been paid. They will deliver your order next.`,
      };
    case 'delivered':
      return {
        heading: 'Delivered: your money is still held',
        text: view.terms.reviewDeadline
          ? `${view.sellerName} says your order was delivered. Check it and confirm, or report a problem to them, before ${formatDateTime(view.terms.reviewDeadline)}.`
          : `${view.sellerName} says your order was delivered.`,
      };
    case 'confirmed':
      return {
        heading: 'Complete: the payment is released to the seller',
        text: `${amount} is released to ${view.sellerName}.`,
      };
    case 'released':
      return {
        heading: 'Complete: the seller has been paid',
        text: `${view.sellerName} has received ${amount}.`,
      };
    case 'cancelled':
      return {
        heading: 'Cancelled',
        text: 'This purchase was cancelled before payment. Nothing was charged.',
      };
    case 'expired':
      return { heading: 'Expired', text: 'This purchase was not paid in time. Nothing was charged.' };
    case 'refunded':
      return {
        heading: 'Refunded',
        text: `Safehold is returning ${formatMoney(view.refundedMinor, view.currency)} to you.`,
      };
    case 'disputed':
    case 'under_review':
      return {
        heading: 'Under review',
        text: 'A problem was reported; the money stays held while it is reviewed.',
      };
    default:
      return { heading: view.status, text: '' };
  }
}

const STATUS_LABEL: Record<string, string> = {
  pending_payment: 'Waiting for payment',
  reserved: 'Paid, held by Safehold',
  delivered: 'Delivered, held by Safehold',
  confirmed: 'Confirmed, released to the seller',
  released: 'Completed',
  cancelled: 'Cancelled',
  expired: 'Expired',
  refunded: 'Refunded',
  disputed: 'Under review',
  under_review: 'Under review',
};

export function buyerPage(token: string, view: BuyerView, notice?: BuyerNotice, status = 200): Page {
  const amount = formatMoney(view.amountMinor, view.currency);
  const words = statusWords(view);
  const noticeBlock: HtmlValue = notice
    ? html`<div class="notice ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">
<h2 id="notice-title" tabindex="-1" data-autofocus>${notice.heading}</h2>
<p>${notice.text}</p>
</div>`
    : null;
  const held = view.status === 'reserved' || view.status === 'delivered';
  const confirm: HtmlValue = view.canConfirm
    ? html`<section class="card" aria-labelledby="confirm-title">
<h2 id="confirm-title">Received your order?</h2>
<p>Confirm only when you have it and are happy with it. Confirming releases <strong>${amount}</strong> to ${view.sellerName}, and cannot be undone.</p>
<form method="post" action="${buyerPath(token)}/confirm">
<button type="submit">Confirm I received it</button>
</form>
</section>`
    : null;
  const pay: HtmlValue = view.paymentLink
    ? html`<p><a class="button" href="${view.paymentLink}">Go to payment</a></p>`
    : null;
  return {
    status,
    title: `Your purchase: ${view.title}`,
    testMode: !view.livemode,
    script: PAGE_SCRIPT,
    footer: BUYER_FOOTER,
    body: html`${noticeBlock}
<section class="card" aria-labelledby="buyer-title">
<h1 id="buyer-title">${view.title}</h1>
<p class="amount">${amount}</p>
<div class="notice ${held || view.status === 'confirmed' || view.status === 'released' ? 'ok' : 'info'}">
<p><strong>${words.heading}</strong></p>
${words.text ? html`<p>${words.text}</p>` : null}
${pay}
</div>
<dl class="facts">
<dt>Status</dt><dd>${STATUS_LABEL[view.status] ?? view.status}</dd>
<dt>Seller</dt><dd>${view.sellerName}</dd>
${held ? html`<dt>Review window</dt><dd>${reviewWindowText(view.terms)}</dd>` : null}
</dl>
</section>
${confirm}
${held || view.status === 'pending_payment' ? html`<section class="card" aria-labelledby="protection-title"><h2 id="protection-title">How your money is protected</h2>${protectionTerms(view.terms, view.sellerName, held)}</section>` : null}`,
  };
}

export function unknownBuyerPage(): Page {
  return {
    status: 404,
    title: 'Buyer page not found',
    footer: BUYER_FOOTER,
    body: html`<div class="notice error">
<h1 id="status-title">Buyer page not found</h1>
<p>This link does not open any purchase. Check that you copied the whole link from the message you received.</p>
</div>`,
  };
}
