import type { EvidenceView } from '../operations/dispute-view.ts';
import type { DisputeCase } from '../operations/operator-console.ts';
import type { HistoryEntry } from '../store/operator-queries.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { type HtmlValue, html, raw } from './html.ts';
import { type ConsoleNav, type Notice, noticeBlock, type OperatorPage } from './operator-layout.ts';
import { casePath, DISPUTE_STATUS_LABEL, envBadge, REASON_LABEL } from './operator-queue-page.ts';

/**
 * The case page: the dispute, both sides' evidence (and the operator's notes), the transaction's
 * history and journal, and the forms that decide the case or add a note. Files are links to the
 * console's own download route; images also show inline (an <img> never runs what it loads).
 */

export const evidenceFileRoute = (disputeId: string, evidenceId: string) =>
  `${casePath(disputeId)}/evidence/${encodeURIComponent(evidenceId)}`;

/** What the resolve form held when it was sent (shown again with an error). */
export interface ResolveFormValues {
  decision?: string;
  amount_to_seller?: string;
  amount_to_buyer?: string;
  note?: string;
  /** The field the error is about. */
  errorParam?: string;
}

export interface CasePageOptions {
  notice?: Notice;
  resolveForm?: ResolveFormValues;
  noteText?: string;
  /** A fresh key per rendering: a double submit of one form replays instead of deciding twice. */
  idempotencyKey: string;
  status?: number;
}

const SIDES = [
  { by: 'buyer', title: 'Buyer' },
  { by: 'seller', title: 'Seller (merchant)' },
  { by: 'operator', title: 'Operator notes' },
] as const;

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function time(date: Date | string): HtmlValue {
  const at = typeof date === 'string' ? new Date(date) : date;
  return html`<time datetime="${at.toISOString()}">${formatDateTime(at)}</time>`;
}

function bytes(size: number | null): string {
  if (size === null) return '';
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MiB`;
}

function evidenceItem(disputeId: string, e: EvidenceView): HtmlValue {
  let content: HtmlValue;
  if (e.kind === 'file') {
    const href = evidenceFileRoute(disputeId, e.id);
    content = html`<p><a href="${href}" download>${e.file_name ?? 'file'}</a> <span class="muted">(${e.content_type ?? ''}, ${bytes(e.size_bytes)})</span></p>
${e.content_type && IMAGE_TYPES.has(e.content_type) ? html`<img class="evidence" src="${href}" alt="${`Evidence image ${e.file_name ?? ''}`}">` : null}
${e.description ? html`<p class="evidence-text">${e.description}</p>` : null}`;
  } else if (e.kind === 'url') {
    content = html`<p class="evidence-text"><a href="${e.content}" rel="noopener noreferrer nofollow" target="_blank">${e.content}</a></p>`;
  } else {
    content = html`<p class="evidence-text">${e.content}</p>`;
  }
  return html`<li id="${e.id}"><span class="badge side">${e.kind}</span> <span class="muted">${time(e.submitted_at)}</span>${content}</li>`;
}

function evidenceSection(c: DisputeCase): HtmlValue {
  const groups = SIDES.map(({ by, title }) => {
    const items = c.dispute.evidence.filter((e) => e.submitted_by === by);
    return html`<section class="card" aria-labelledby="evidence-${by}">
<h3 id="evidence-${by}">${title} <span class="muted">(${items.length})</span></h3>
${items.length ? html`<ol class="evidence">${items.map((e) => evidenceItem(c.dispute.id, e))}</ol>` : html`<p class="muted">None.</p>`}
</section>`;
  });
  return html`<h2 id="evidence">Evidence</h2><div class="two">${groups}</div>`;
}

function change(entry: HistoryEntry): string {
  if (entry.type === 'transaction.status_changed' && entry.status) {
    return `${entry.previous_status ?? '?'} → ${entry.status}${entry.settlement_status ? ` (${entry.settlement_status})` : ''}`;
  }
  return entry.object_status ?? '';
}

function historySection(c: DisputeCase): HtmlValue {
  return html`<section class="card table-card" aria-labelledby="history-title">
<h2 id="history-title" class="pad">Transaction history</h2>
${
  c.history.length
    ? html`<table class="list">
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Status</th></tr></thead>
<tbody>${c.history.map(
        (e) =>
          html`<tr><td data-label="Time">${time(e.created_at)}</td><td data-label="Event"><code>${e.type}</code></td><td data-label="Status">${change(e)}</td></tr>`,
      )}</tbody>
</table>`
    : html`<p class="pad muted">No events kept (events are kept 30 days).</p>`
}
</section>`;
}

function ledgerSection(c: DisputeCase): HtmlValue {
  return html`<section class="card table-card" aria-labelledby="ledger-title">
<h2 id="ledger-title" class="pad">Ledger</h2>
${
  c.ledger.length
    ? html`<table class="list">
<thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Debit</th><th scope="col">Credit</th><th scope="col">Amount</th></tr></thead>
<tbody>${c.ledger.map(
        (r) =>
          html`<tr><td data-label="Time">${time(r.created_at)}</td><td data-label="Kind"><code>${r.kind}</code></td><td data-label="Debit"><code>${r.debit_account}</code></td><td data-label="Credit"><code>${r.credit_account}</code></td><td data-label="Amount" class="num">${formatMoney(r.amount_minor, r.currency)}</td></tr>`,
      )}</tbody>
</table>`
    : html`<p class="pad muted">No journal rows.</p>`
}
</section>`;
}

function outcomeSection(c: DisputeCase): HtmlValue {
  const outcome = c.dispute.outcome;
  if (!outcome) return null;
  const money = (minor: number) => formatMoney(BigInt(minor), c.dispute.currency);
  const decision = { seller: 'For the seller', buyer: 'For the buyer', split: 'Split' }[outcome.decision];
  return html`<section class="card" aria-labelledby="outcome-title">
<h2 id="outcome-title">Outcome: ${decision}</h2>
<dl class="facts">
<dt>To the seller</dt><dd>${money(outcome.amount_to_seller_minor)}</dd>
<dt>To the buyer</dt><dd>${money(outcome.amount_to_buyer_minor)}</dd>
<dt>Decided</dt><dd>${time(outcome.decided_at)}</dd>
${outcome.note ? html`<dt>Note</dt><dd class="evidence-text">${outcome.note}</dd>` : null}
</dl>
${
  c.refunds.length
    ? html`<h3>Refunds</h3><ul class="terms">${c.refunds.map(
        (r) =>
          html`<li><code>${r.id}</code>: ${formatMoney(r.amount_minor, r.currency)}, <strong>${r.status}</strong> (${r.origin})${r.failure_reason ? html`: ${r.failure_reason}` : null}</li>`,
      )}</ul>`
    : null
}
</section>`;
}

function field(
  name: 'amount_to_seller' | 'amount_to_buyer',
  label: string,
  currency: string,
  form: ResolveFormValues,
): HtmlValue {
  const invalid = form.errorParam === name;
  return html`<div><label for="${name}">${label} (${currency})</label>
<input id="${name}" name="${name}" inputmode="decimal" autocomplete="off" value="${form[name] ?? ''}"${invalid ? raw(' aria-invalid="true"') : null}></div>`;
}

function resolveSection(c: DisputeCase, csrf: string, options: CasePageOptions): HtmlValue {
  const form = options.resolveForm ?? {};
  const held = formatMoney(c.heldMinor, c.dispute.currency);
  const choice = (value: string, label: string, hint: string) =>
    html`<label class="choice"><input type="radio" name="decision" value="${value}" required${form.decision === value ? raw(' checked') : null}> <span><strong>${label}</strong><br><span class="muted">${hint}</span></span></label>`;
  return html`<section class="card" aria-labelledby="resolve-title">
<h2 id="resolve-title">Decide the case</h2>
<p>Held in escrow: <strong>${held}</strong>. The decision is final: it approves the seller's part for release and starts the buyer's refund at once.</p>
<form method="post" action="${casePath(c.dispute.id)}/resolve">
<input type="hidden" name="csrf_token" value="${csrf}">
<input type="hidden" name="idempotency_key" value="${options.idempotencyKey}">
<fieldset${form.errorParam === 'decision' ? raw(' aria-invalid="true"') : null}>
<legend>Decision</legend>
${choice('seller', 'For the seller', `Release everything held (${held}) to the seller.`)}
${choice('buyer', 'For the buyer', `Refund everything held (${held}) to the buyer.`)}
${choice('split', 'Split', 'Release one part to the seller and refund the other to the buyer; give one amount or both.')}
</fieldset>
<div class="row">
${field('amount_to_seller', 'To the seller', c.dispute.currency, form)}
${field('amount_to_buyer', 'To the buyer', c.dispute.currency, form)}
</div>
<label for="note">Note with the outcome <span class="muted">(optional)</span></label>
<textarea id="note" name="note" maxlength="2000"${form.errorParam === 'note' ? raw(' aria-invalid="true"') : null}>${form.note ?? ''}</textarea>
<button type="submit">Record decision</button>
</form>
</section>`;
}

function noteSection(c: DisputeCase, csrf: string, options: CasePageOptions): HtmlValue {
  return html`<section class="card" aria-labelledby="note-title">
<h2 id="note-title">Add an operator note</h2>
<p class="muted">Added to the dispute's evidence as the operator's; the merchant sees it through the API.</p>
<form method="post" action="${casePath(c.dispute.id)}/notes">
<input type="hidden" name="csrf_token" value="${csrf}">
<label for="note-text">Operator note</label>
<textarea id="note-text" name="content" required maxlength="5000">${options.noteText ?? ''}</textarea>
<button type="submit" class="secondary">Add note</button>
</form>
</section>`;
}

export function casePage(c: DisputeCase, nav: ConsoleNav, options: CasePageOptions): OperatorPage {
  const d = c.dispute;
  const t = c.transaction;
  const due = new Date(d.evidence_due_by);
  const undecided = d.status === 'open' || d.status === 'under_review';
  const overdue = undecided && due.getTime() <= c.now.getTime();
  const refused: HtmlValue = c.refundRefused
    ? html`<div class="notice error" role="alert"><h2>The buyer's refund was refused: decide again</h2>
<p>The rail refused the refund of the decision below, so the money is held again and the transaction is back under review. Record a new decision: it replaces the outcome.</p></div>`
    : null;
  const party = (p: { name?: string | null; email?: string | null } | null) =>
    [p?.name, p?.email].filter(Boolean).join(', ') || '—';
  return {
    status: options.status ?? 200,
    title: `Dispute ${d.id}`,
    nav,
    body: html`${noticeBlock(options.notice)}
${refused}
<p><a href="/operator/disputes">← Dispute queue</a></p>
<section class="card" aria-labelledby="case-title">
<h1 id="case-title">Dispute <code>${d.id}</code> ${envBadge(d.livemode)}</h1>
<p class="amount">${formatMoney(BigInt(d.amount_minor), d.currency)}</p>
<dl class="facts">
<dt>Status</dt><dd id="dispute-status">${DISPUTE_STATUS_LABEL[d.status] ?? d.status}</dd>
<dt>Reason</dt><dd>${REASON_LABEL[d.reason] ?? d.reason}</dd>
<dt>Opened by</dt><dd>${d.opened_by}, ${time(d.created_at)}</dd>
<dt>Evidence due</dt><dd>${time(due)}${overdue ? html` <span class="badge overdue">Overdue</span>` : null}</dd>
<dt>Merchant</dt><dd>${t.merchant_name} <span class="muted">(${t.merchant_id})</span></dd>
<dt>Transaction</dt><dd><code>${t.id}</code>: ${t.title}${t.merchant_reference ? html` <span class="muted">(${t.merchant_reference})</span>` : null}</dd>
<dt>Transaction status</dt><dd id="transaction-status">${t.status} / ${t.settlement_status}</dd>
<dt>Held</dt><dd>${formatMoney(c.heldMinor, t.currency)}</dd>
<dt>Released</dt><dd>${formatMoney(t.amount_released_minor, t.currency)}</dd>
<dt>Refunded</dt><dd>${formatMoney(t.amount_refunded_minor, t.currency)}</dd>
<dt>Buyer</dt><dd>${party(t.customer)}</dd>
<dt>Seller</dt><dd>${party(t.seller)}</dd>
</dl>
<h2>Description</h2>
<p class="evidence-text">${d.description}</p>
</section>
${outcomeSection(c)}
${evidenceSection(c)}
${c.decidable ? resolveSection(c, nav.csrf, options) : null}
${undecided ? noteSection(c, nav.csrf, options) : null}
${historySection(c)}
${ledgerSection(c)}`,
  };
}
