import type { BuyerView } from '../operations/buyer-actions.ts';
import type { DisputeView, EvidenceView } from '../operations/dispute-view.ts';
import { DISPUTE_REASONS } from '../schemas/disputes.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { type HtmlValue, html, raw, type SafeHtml } from './html.ts';
import type { Page } from './layout.ts';
import { protectionTerms, reviewWindowText } from './protection.ts';
import { PAGE_SCRIPT } from './scripts.ts';

/**
 * The buyer's own page (GET /buyer/{token}): the purchase's status in plain words, the
 * "Confirm I received it" button and the "Report a problem" form (a dispute, with an optional
 * photo or document) while the money is held; then the dispute, its evidence and its outcome.
 * Every form is a plain post that works without scripts.
 */

const BUYER_FOOTER =
  'This is your private buyer page. Do not share its link: anyone who has it can confirm receipt or report a problem for you.';

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
          ? `${view.sellerName} says your order was delivered. Check it and confirm, or report a problem below, before ${formatDateTime(view.terms.reviewDeadline)}.`
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

export interface BuyerPageOptions {
  notice?: BuyerNotice;
  status?: number;
  /** The purchase's latest dispute, open or decided. */
  dispute?: DisputeView | null;
  /** What the buyer typed, shown again when a form comes back with an error. */
  form?: { reason?: string; description?: string; text?: string };
}

export function buyerPage(token: string, view: BuyerView, options: BuyerPageOptions = {}): Page {
  const { notice, status = 200, dispute = null, form = {} } = options;
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
${dispute ? disputeSection(token, dispute, view.currency, form) : view.canConfirm ? reportForm(token, form) : null}
${held || view.status === 'pending_payment' ? html`<section class="card" aria-labelledby="protection-title"><h2 id="protection-title">How your money is protected</h2>${protectionTerms(view.terms, view.sellerName, held)}</section>` : null}`,
  };
}

/** The plain words for each dispute reason, as the buyer picks them. */
export const REASON_WORDS: Record<(typeof DISPUTE_REASONS)[number], string> = {
  not_received: 'I did not receive it',
  not_as_described: 'It is not as described',
  damaged: 'It arrived damaged',
  unauthorized: 'I did not make this purchase',
  other: 'Something else',
};

const FILE_ACCEPT = 'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,.txt';
const FILE_HINT = 'A photo (PNG, JPEG, GIF or WebP), a PDF or a text file, up to 5 MB.';

function reportForm(token: string, form: BuyerPageOptions['form'] = {}): SafeHtml {
  const options = DISPUTE_REASONS.map(
    (reason) =>
      html`<option value="${reason}"${form.reason === reason ? raw(' selected') : null}>${REASON_WORDS[reason]}</option>`,
  );
  return html`<section class="card" aria-labelledby="dispute-title">
<h2 id="dispute-title">Something wrong?</h2>
<p>Report a problem and Safehold keeps your money held while the seller answers and Safehold reviews the case. Only report a problem you could not solve with the seller.</p>
<form method="post" action="${buyerPath(token)}/dispute" enctype="multipart/form-data">
<label for="reason">What went wrong?</label>
<select id="reason" name="reason" required>${options}</select>
<label for="description">Describe the problem</label>
<span class="hint" id="description-hint">What happened, and what you would like: a refund, a replacement…</span>
<textarea id="description" name="description" required maxlength="5000" aria-describedby="description-hint">${form.description ?? ''}</textarea>
<label for="dispute-file">Photo or document (optional)</label>
<span class="hint" id="dispute-file-hint">${FILE_HINT}</span>
<input id="dispute-file" name="file" type="file" accept="${FILE_ACCEPT}" aria-describedby="dispute-file-hint">
<button type="submit" class="danger">Open a dispute</button>
</form>
</section>`;
}

const PARTY: Record<EvidenceView['submitted_by'], string> = {
  buyer: 'You',
  seller: 'The seller',
  operator: 'Safehold',
};

function sizeText(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function evidenceItem(token: string, e: EvidenceView): SafeHtml {
  let body: HtmlValue;
  if (e.kind === 'file') {
    body = html`<a href="${buyerPath(token)}/evidence/${encodeURIComponent(e.id)}" download>${e.file_name}</a> (${sizeText(e.size_bytes)})${e.description ? html`<br>${e.description}` : null}`;
  } else if (e.kind === 'url') {
    body = html`<a class="evidence-text" href="${e.content}" rel="noopener noreferrer nofollow">${e.content}</a>`;
  } else {
    body = html`<span class="evidence-text">${e.content}</span>`;
  }
  return html`<li><strong>${PARTY[e.submitted_by]}</strong>, ${formatDateTime(new Date(e.submitted_at))}:<br>${body}</li>`;
}

function disputeStatusWords(d: DisputeView, currency: string): { heading: string; text: string } {
  const due = formatDateTime(new Date(d.evidence_due_by));
  switch (d.status) {
    case 'open':
      return {
        heading: 'Dispute open: your money stays held',
        text: `You and the seller can add photos, documents and notes until ${due}. Then Safehold reviews the case.`,
      };
    case 'under_review':
      return {
        heading: 'Under review by Safehold',
        text: 'The time for evidence has ended. Safehold is reviewing the case and will decide where the money goes.',
      };
    case 'resolved': {
      const o = d.outcome;
      const toBuyer = formatMoney(BigInt(o?.amount_to_buyer_minor ?? 0), currency);
      const toSeller = formatMoney(BigInt(o?.amount_to_seller_minor ?? 0), currency);
      const text =
        o?.decision === 'buyer'
          ? `Safehold decided in your favour: ${toBuyer} is refunded to you.`
          : o?.decision === 'split'
            ? `Safehold split the payment: ${toBuyer} is refunded to you and ${toSeller} goes to the seller.`
            : `Safehold decided for the seller: ${toSeller} is released to them.`;
      return { heading: 'Dispute decided', text };
    }
    default:
      return { heading: 'Dispute withdrawn', text: 'This dispute was withdrawn.' };
  }
}

function disputeSection(
  token: string,
  d: DisputeView,
  currency: string,
  form: BuyerPageOptions['form'] = {},
): SafeHtml {
  const words = disputeStatusWords(d, currency);
  const open = d.status === 'open';
  const addForm: HtmlValue = open
    ? html`<h3 id="add-evidence-title">Add evidence</h3>
<form method="post" action="${buyerPath(token)}/dispute/evidence" enctype="multipart/form-data" aria-labelledby="add-evidence-title">
<label for="evidence-text">Note</label>
<span class="hint" id="evidence-text-hint">With a file, this describes it. Without one, it is added as a note.</span>
<textarea id="evidence-text" name="text" maxlength="5000" aria-describedby="evidence-text-hint">${form.text ?? ''}</textarea>
<label for="evidence-file">Photo or document (optional)</label>
<span class="hint" id="evidence-file-hint">${FILE_HINT}</span>
<input id="evidence-file" name="file" type="file" accept="${FILE_ACCEPT}" aria-describedby="evidence-file-hint">
<button type="submit">Add to the dispute</button>
</form>`
    : null;
  return html`<section class="card" aria-labelledby="your-dispute-title">
<h2 id="your-dispute-title">Your dispute</h2>
<div class="notice ${d.status === 'resolved' ? 'ok' : 'info'}">
<p><strong>${words.heading}</strong></p>
<p>${words.text}</p>
${d.outcome?.note ? html`<p>Safehold's note: ${d.outcome.note}</p>` : null}
</div>
<dl class="facts">
<dt>Reason</dt><dd>${REASON_WORDS[d.reason] ?? d.reason}</dd>
<dt>Opened</dt><dd>${formatDateTime(new Date(d.created_at))}${d.opened_by === 'buyer' ? ' by you' : ' by the seller'}</dd>
<dt>Evidence until</dt><dd>${formatDateTime(new Date(d.evidence_due_by))}</dd>
</dl>
<p class="evidence-text">${d.description}</p>
<h3 id="evidence-title">Evidence</h3>
${d.evidence.length > 0 ? html`<ul class="terms" aria-labelledby="evidence-title">${d.evidence.map((e) => evidenceItem(token, e))}</ul>` : html`<p class="muted">None yet.</p>`}
${addForm}
</section>`;
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
