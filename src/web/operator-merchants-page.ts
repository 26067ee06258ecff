import type { QueuedMerchant } from '../store/operator-queries.ts';
import { formatDateTime } from './format.ts';
import { html } from './html.ts';
import { type ConsoleNav, type Notice, noticeBlock, type OperatorPage } from './operator-layout.ts';

export const merchantVerificationPath = (id: string) =>
  `/operator/merchants/${encodeURIComponent(id)}/verification`;

function row(merchant: QueuedMerchant, csrf: string) {
  const decide = (decision: 'verified' | 'rejected', label: string, style: string) =>
    html`<form method="post" action="${merchantVerificationPath(merchant.id)}">
<input type="hidden" name="csrf_token" value="${csrf}">
<input type="hidden" name="decision" value="${decision}">
<button type="submit" class="${style}" aria-label="${label} ${merchant.name}">${label}</button>
</form>`;
  return html`<tr>
<td data-label="Business"><strong>${merchant.name}</strong><br><span class="muted">${merchant.email}</span></td>
<td data-label="Merchant"><code>${merchant.id}</code></td>
<td data-label="Status"><span class="badge ${merchant.verification_status === 'pending' ? 'test' : 'side'}">${merchant.verification_status}</span></td>
<td data-label="Signed up"><time datetime="${merchant.created_at.toISOString()}">${formatDateTime(merchant.created_at)}</time></td>
<td><div class="actions">${decide('verified', 'Approve', '')}${decide('rejected', 'Reject', 'danger')}</div></td>
</tr>`;
}

/** The business-verification queue with an approve and a reject button per business. */
export function merchantsPage(
  queue: { rows: QueuedMerchant[]; total: number },
  nav: ConsoleNav,
  notice?: Notice,
  status = 200,
): OperatorPage {
  const table = queue.rows.length
    ? html`<div class="card table-card"><table class="list">
<thead><tr><th scope="col">Business</th><th scope="col">Merchant</th><th scope="col">Status</th><th scope="col">Signed up</th><th scope="col">Decision</th></tr></thead>
<tbody>${queue.rows.map((m) => row(m, nav.csrf))}</tbody>
</table></div>`
    : html`<p class="card">No business is waiting for verification.</p>`;
  const more =
    queue.total > queue.rows.length
      ? html`<p class="muted">Showing ${queue.rows.length} of ${queue.total}; decided businesses leave the queue and the next ones appear.</p>`
      : null;
  return {
    status,
    title: 'Business verification',
    nav,
    body: html`${noticeBlock(notice)}
<h1>Businesses awaiting verification</h1>
<p class="muted">A merchant's live keys answer 403 permission_denied until its business is verified. Approving lets them work at once; rejecting keeps them refused. Test keys work either way. Businesses that asked for review (pending) come first.</p>
${table}
${more}`,
  };
}
