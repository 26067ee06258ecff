import type { FastifyReply } from 'fastify';
import { type HtmlValue, html, raw, type SafeHtml } from './html.ts';
import { CSS, redirectTo, sendHtml } from './layout.ts';
import { PAGE_SCRIPT } from './scripts.ts';

/**
 * The operator console's page shell: the same look as the checkout and buyer pages (their CSS),
 * a wider main column for tables, and a navigation bar with the sign-out form once signed in.
 * Same headers as every page: no caching, no referrer, no framing, a nonce CSP.
 */

const OPERATOR_CSS = `
main.console{max-width:64rem}
main.console dl.facts{grid-template-columns:auto minmax(0,1fr)}
main.console dd,main.console code,main.console h1,table.list td{overflow-wrap:anywhere}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
nav.console{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:center}
nav.console a{color:#fff;font-weight:600;text-decoration:none;padding:.35rem .5rem;border-radius:.35rem}
nav.console a[aria-current=page]{background:#244a6e}
nav.console a:hover{text-decoration:underline}
nav.console form{margin:0}
nav.console button{display:inline-block;width:auto;min-height:36px;margin:0;padding:.3rem .75rem;font-size:.9rem;background:#244a6e}
nav.console .who{font-size:.8rem;opacity:.85}
table.list{width:100%;border-collapse:collapse;font-size:.95rem;background:#fff}
table.list th,table.list td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid #d5dbe1;vertical-align:top}
table.list th{font-size:.85rem;color:#4a5561;font-weight:600}
table.list td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
table.list tr.overdue td{background:#fdecee}
.table-card{padding:0;overflow:hidden}
.table-card .pad{padding:1rem 1.1rem .5rem;margin:0}
.badge.live{background:#e7f5ec;color:#0d3d1d}
.badge.test{background:#fff4d6;color:#4d3500}
.badge.overdue{background:#b3261e;color:#fff}
.badge.side{background:#eceff3;color:#1b1f24}
textarea,select{width:100%;font:inherit;padding:.6rem .75rem;border:2px solid #6b7785;border-radius:.5rem;background:#fff;color:#1b1f24}
textarea{min-height:6rem}
fieldset{border:0;margin:.5rem 0;padding:0}
legend{font-weight:600;margin:0 0 .25rem}
label.choice{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:.35rem 0}
label.choice input{width:auto;margin:0}
.actions{display:flex;flex-wrap:wrap;gap:.5rem}
.actions form{margin:0}
.actions button{display:inline-block;width:auto;min-height:40px;margin:0;padding:.45rem 1rem;font-size:.95rem}
ol.evidence{list-style:none;padding:0;margin:0}
ol.evidence li{border-top:1px solid #d5dbe1;padding:.6rem 0}
ol.evidence li:first-child{border-top:0}
.evidence-text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0}
img.evidence{display:block;max-width:100%;max-height:24rem;height:auto;border:1px solid #d5dbe1;border-radius:.5rem;margin:.5rem 0;background:#fff}
.pager{display:flex;justify-content:flex-end;margin:.5rem 0 1rem}
.pager a.button{display:inline-block;width:auto;margin:0;padding:.6rem 1.25rem}
.two{display:grid;grid-template-columns:1fr;gap:0 1rem}
@media (min-width:52rem){.two{grid-template-columns:1fr 1fr}}
@media (max-width:40rem){
  table.list thead{display:none}
  table.list tr{display:block;border-bottom:1px solid #d5dbe1;padding:.4rem 0}
  table.list td{display:block;border:0;padding:.15rem .75rem}
  table.list td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#4a5561}
}
`;

export type ConsoleSection = 'disputes' | 'merchants';

export interface ConsoleNav {
  csrf: string;
  keyHint: string;
  current?: ConsoleSection;
}

export interface OperatorPage {
  status: number;
  title: string;
  body: SafeHtml;
  /** Present once signed in: the navigation and the sign-out form. */
  nav?: ConsoleNav;
}

export interface Notice {
  kind: 'ok' | 'error' | 'info';
  heading: string;
  text?: string;
}

export function noticeBlock(notice: Notice | undefined): HtmlValue {
  if (!notice) return null;
  return html`<div class="notice ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">
<h2 tabindex="-1" data-autofocus>${notice.heading}</h2>
${notice.text ? html`<p>${notice.text}</p>` : null}
</div>`;
}

function navBar(nav: ConsoleNav | undefined): HtmlValue {
  if (!nav) return null;
  const link = (section: ConsoleSection, href: string, label: string) =>
    html`<a href="${href}"${nav.current === section ? raw(' aria-current="page"') : null}>${label}</a>`;
  return html`<nav class="console" aria-label="Console">
${link('disputes', '/operator/disputes', 'Disputes')}
${link('merchants', '/operator/merchants', 'Businesses')}
<span class="who">Key …${nav.keyHint.slice(-4)}</span>
<form method="post" action="/operator/sign-out"><input type="hidden" name="csrf_token" value="${nav.csrf}"><button type="submit">Sign out</button></form>
</nav>`;
}

export function renderOperatorPage(page: OperatorPage, nonce: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${page.title} · Safehold operator</title>
<style nonce="${nonce}">${raw(CSS)}${raw(OPERATOR_CSS)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="brand">Safehold <span>· operator console</span></div>${navBar(page.nav)}</header>
<main id="main" class="console" tabindex="-1">
${page.body}
</main>
<footer><p>Operator console. Decisions here move real money in live mode; every one is recorded as an event on its transaction.</p></footer>
<script nonce="${nonce}">${raw(PAGE_SCRIPT)}</script>
</body>
</html>
`.text;
}

export function sendOperatorPage(reply: FastifyReply, page: OperatorPage): FastifyReply {
  return sendHtml(reply, page.status, (nonce) => renderOperatorPage(page, nonce));
}

/** After a form post: 303 to a console page, so a reload does not post again. */
export const seeOther = redirectTo;

/** A page of the console's own for what is not there (an unknown dispute id). */
export function notFoundPage(what: string, nav: ConsoleNav): OperatorPage {
  return {
    status: 404,
    title: 'Not found',
    nav,
    body: html`<div class="notice error"><h1>Not found</h1><p>${what}</p></div>
<p><a href="/operator/disputes">Back to the dispute queue</a></p>`,
  };
}
