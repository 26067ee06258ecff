import type { QueuedDispute } from '../store/operator-queries.ts';
import { formatDateTime, formatMoney } from './format.ts';
import { type HtmlValue, html, raw } from './html.ts';
import type { ConsoleNav, OperatorPage } from './operator-layout.ts';

export const casePath = (disputeId: string) => `/operator/disputes/${encodeURIComponent(disputeId)}`;

export type EnvFilter = 'all' | 'live' | 'test';

export const REASON_LABEL: Record<string, string> = {
  not_received: 'Not received',
  not_as_described: 'Not as described',
  damaged: 'Damaged',
  unauthorized: 'Unauthorized',
  other: 'Other',
};

export const DISPUTE_STATUS_LABEL: Record<string, string> = {
  open: 'Open: collecting evidence',
  under_review: 'Under review',
  resolved: 'Resolved',
  withdrawn: 'Withdrawn',
};

export function envBadge(livemode: boolean): HtmlValue {
  return livemode ? html`<span class="badge live">Live</span>` : html`<span class="badge test">Test</span>`;
}

function row(d: QueuedDispute): HtmlValue {
  return html`<tr${d.overdue ? raw(' class="overdue"') : null}>
<td data-label="Deadline"><time datetime="${d.evidence_due_by.toISOString()}">${formatDateTime(d.evidence_due_by)}</time>${d.overdue ? html` <span class="badge overdue">Overdue</span>` : null}</td>
<td data-label="Dispute"><a href="${casePath(d.id)}">${d.id}</a><br><span class="muted">${REASON_LABEL[d.reason] ?? d.reason} · ${d.title}</span></td>
<td data-label="Merchant">${d.merchant_name}</td>
<td data-label="Amount" class="num">${formatMoney(d.amount_minor, d.currency)}</td>
<td data-label="Status">${d.decide_again ? html`<strong>Refund refused: decide again</strong>` : (DISPUTE_STATUS_LABEL[d.status] ?? d.status)}</td>
<td data-label="Mode">${envBadge(d.livemode)}</td>
</tr>`;
}

function filterLinks(env: EnvFilter): HtmlValue {
  const link = (value: EnvFilter, label: string) =>
    value === env
      ? html`<strong aria-current="page">${label}</strong>`
      : html`<a href="/operator/disputes${value === 'all' ? '' : `?env=${value}`}">${label}</a>`;
  return html`<p>Show: ${link('all', 'All')} · ${link('live', 'Live only')} · ${link('test', 'Test only')}</p>`;
}

/** The dispute queue: every dispute waiting for the operator, of every merchant and environment, by deadline. */
export function queuePage(
  queue: { rows: QueuedDispute[]; hasMore: boolean },
  env: EnvFilter,
  nav: ConsoleNav,
): OperatorPage {
  const last = queue.rows.at(-1);
  const nextParams = new URLSearchParams();
  if (env !== 'all') nextParams.set('env', env);
  if (last) nextParams.set('after', last.id);
  const overdue = queue.rows.filter((d) => d.overdue).length;
  return {
    status: 200,
    title: 'Dispute queue',
    nav,
    body: html`<h1>Dispute queue</h1>
<p class="muted">Undecided disputes (open or under review) of every merchant, and decisions whose refund the rail refused, the soonest evidence deadline first. Deadlines are on each merchant's clock (the test clock in test mode).${overdue ? html` <strong>${overdue} overdue on this page.</strong>` : null}</p>
${filterLinks(env)}
${
  queue.rows.length
    ? html`<div class="card table-card"><table class="list">
<thead><tr><th scope="col">Evidence due</th><th scope="col">Dispute</th><th scope="col">Merchant</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Mode</th></tr></thead>
<tbody>${queue.rows.map(row)}</tbody>
</table></div>`
    : html`<p class="card">No undecided disputes${env === 'all' ? '' : ` in ${env} mode`}.</p>`
}
${queue.hasMore ? html`<p class="pager"><a class="button" href="/operator/disputes?${nextParams.toString()}">Next page</a></p>` : null}`,
  };
}
