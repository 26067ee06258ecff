import type { ReleaseTerms } from '../operations/checkout.ts';
import { formatDateTime, plural } from './format.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * The protection terms in plain words: where the money is, when the seller is paid, what the
 * buyer can do if something is wrong. Shared by the checkout and buyer pages.
 */
export function protectionTerms(terms: ReleaseTerms, seller: string, paid: boolean): SafeHtml {
  const window = plural(terms.reviewWindowDays, 'day', 'days');
  const held = paid
    ? html`<li>Your payment is held by <strong>Safehold</strong>. It has <strong>not</strong> been paid to ${seller}.</li>`
    : html`<li>Your payment goes to <strong>Safehold</strong> and is held there. It is <strong>not</strong> paid to ${seller} when you pay.</li>`;

  let release: SafeHtml;
  if (terms.type === 'time_based' && terms.releaseAt) {
    release = html`<li>${seller} is paid on <strong>${formatDateTime(terms.releaseAt)}</strong>, or earlier if you confirm that you received your order.</li>`;
  } else if (terms.type === 'delivery_confirmation') {
    release = html`<li>${seller} is paid once the delivery of your order is confirmed, or earlier if you confirm that you received it.</li>`;
  } else if (terms.reviewDeadline) {
    release = html`<li>${seller} is paid when you confirm that you received your order, or when your review window ends on <strong>${formatDateTime(terms.reviewDeadline)}</strong>, whichever comes first.</li>`;
  } else {
    release = html`<li>${seller} is paid only when you confirm that you received your order, or when the review window ends: <strong>${window} after ${seller} marks it delivered</strong>.</li>`;
  }

  return html`<ul class="terms">
${held}
${release}
<li>If something is wrong with your order, contact ${seller} before the review window ends, and do not confirm receipt until you are satisfied.</li>
<li>If ${seller} cancels before delivering, Safehold returns your money to you.</li>
</ul>`;
}

/** One line on the review window for the paid page's facts. */
export function reviewWindowText(terms: ReleaseTerms): string {
  if (terms.type === 'time_based' && terms.releaseAt) return `Until ${formatDateTime(terms.releaseAt)}`;
  if (terms.type === 'delivery_confirmation') return 'Until the delivery is confirmed';
  if (terms.reviewDeadline) return `Ends ${formatDateTime(terms.reviewDeadline)}`;
  return `${plural(terms.reviewWindowDays, 'day', 'days')} after delivery`;
}
