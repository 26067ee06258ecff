import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { type HtmlValue, html, raw, type SafeHtml } from './html.ts';

/**
 * The page shell every web page shares, and the headers that go with it. Pages carry secret
 * tokens in their URLs, so nothing is cached, nothing is sent as a referrer, and nothing may
 * frame them; styles and the small polling script are inline, allowed by a per-response nonce.
 */

export const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1b1f24;background:#f3f5f7}
a{color:#0b57a4}
a:focus-visible,button:focus-visible,input:focus-visible,summary:focus-visible,[tabindex]:focus-visible{outline:3px solid #f5a400;outline-offset:2px}
main:focus,[data-autofocus]:focus{outline:none}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:1}
.skip:focus{left:.5rem;top:.5rem}
header.top{background:#0f2a44;color:#fff;padding:.75rem 1rem}
header.top .brand{font-weight:700;letter-spacing:.02em}
header.top .brand span{font-weight:400;opacity:.85}
main{max-width:34rem;margin:0 auto;padding:1rem}
footer{max-width:34rem;margin:0 auto;padding:1rem 1rem 2rem;color:#4a5561;font-size:.875rem}
.card{background:#fff;border:1px solid #d5dbe1;border-radius:.75rem;padding:1rem 1.1rem;margin:0 0 1rem}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 .25rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
h3{font-size:1rem;margin:0 0 .5rem}
p{margin:.5rem 0}
.amount{font-size:2rem;font-weight:700;margin:.25rem 0;font-variant-numeric:tabular-nums}
.muted{color:#4a5561}
dl.facts{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:.5rem 0}
dl.facts dt{color:#4a5561}
dl.facts dd{margin:0;font-weight:600}
ul.terms{padding-left:1.2rem;margin:.5rem 0}
ul.terms li{margin:.35rem 0}
.test-banner{background:#fff4d6;border:1px solid #c98a00;color:#4d3500;border-radius:.5rem;padding:.5rem .75rem;margin:0 0 1rem;font-size:.9rem}
.notice{border-radius:.5rem;padding:.75rem;margin:0 0 1rem;border:1px solid}
.notice.error{background:#fdecee;border-color:#b3261e;color:#6b0f0a}
.notice.ok{background:#e7f5ec;border-color:#1e7b3c;color:#0d3d1d}
.notice.info{background:#e8f1fb;border-color:#0b57a4;color:#0a2d55}
.notice h2{margin:0 0 .25rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{display:block;color:#4a5561;font-size:.875rem;margin:0 0 .25rem}
.field-error{color:#b3261e;font-weight:600;font-size:.9rem;margin:.25rem 0 0}
input,select,textarea{width:100%;font:inherit;font-size:1.1rem;padding:.65rem .75rem;border:2px solid #6b7785;border-radius:.5rem;background:#fff;color:#1b1f24}
textarea{min-height:7rem;resize:vertical}
.evidence-text{white-space:pre-wrap;overflow-wrap:anywhere}
input[type=file]{font-size:1rem;padding:.5rem}
input[aria-invalid=true]{border-color:#b3261e}
.row{display:flex;gap:.75rem}
.row>div{flex:1}
button,.button{display:block;width:100%;min-height:48px;margin:1rem 0 .25rem;padding:.75rem 1rem;font:inherit;font-weight:700;font-size:1.05rem;border:0;border-radius:.5rem;background:#0b57a4;color:#fff;cursor:pointer;text-align:center;text-decoration:none}
button:hover,.button:hover{background:#084582}
button.secondary{background:#fff;color:#0b57a4;border:2px solid #0b57a4}
button.danger{background:#b3261e}
button.danger:hover{background:#8c1d17}
.or{text-align:center;color:#4a5561;margin:.25rem 0 1rem}
.spinner{width:2.5rem;height:2.5rem;border:4px solid #c8d4e0;border-top-color:#0b57a4;border-radius:50%;margin:.5rem auto;animation:spin 1s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.spinner{animation:none;border-top-color:#c8d4e0}}
.badge{display:inline-block;font-size:.8rem;font-weight:700;padding:.1rem .5rem;border-radius:1rem;background:#e8f1fb;color:#0a2d55}
.challenge-frame{border:3px dashed #c98a00}
.shield{display:flex;gap:.5rem;align-items:flex-start;background:#e7f5ec;border-radius:.5rem;padding:.5rem .75rem;margin:.75rem 0 0;color:#0d3d1d;font-size:.95rem}
.shield svg{flex:none;margin-top:.15rem}
`;

export interface Page {
  status: number;
  title: string;
  body: SafeHtml;
  /** Inline script run on the page (trusted constant code only). */
  script?: string;
  /** Reload the page after this many seconds when scripts are off (a payment in progress). */
  refreshWithoutScriptSeconds?: number;
  testMode?: boolean;
  /** A line about the link itself (who may see it). */
  footer?: string;
}

export function pageContentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** Headers for every response on a token-bearing route, pages and JSON alike. */
export const TOKEN_ROUTE_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

export function renderPage(page: Page, nonce: string): string {
  const testBanner: HtmlValue = page.testMode
    ? html`<p class="test-banner"><strong>Test mode.</strong> No real money moves on this page.</p>`
    : null;
  const refresh: HtmlValue =
    page.refreshWithoutScriptSeconds === undefined
      ? null
      : html`<noscript><meta http-equiv="refresh" content="${page.refreshWithoutScriptSeconds}"></noscript>`;
  const script: HtmlValue = page.script ? html`<script nonce="${nonce}">${raw(page.script)}</script>` : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>${page.title} · Safehold</title>
${refresh}
<style nonce="${nonce}">${raw(CSS)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="brand">Safehold <span>· protected payment</span></div></header>
<main id="main" tabindex="-1">
${testBanner}
${page.body}
</main>
<footer><p>${page.footer ?? 'Safehold holds payments and releases them to sellers only on the conditions shown.'}</p></footer>
${script}
</body>
</html>
`.text;
}

/** Sends HTML rendered with a fresh nonce (its inline script's) and the token-route headers. */
export function sendHtml(
  reply: FastifyReply,
  status: number,
  render: (nonce: string) => string,
): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  reply.headers({ ...TOKEN_ROUTE_HEADERS, 'Content-Security-Policy': pageContentSecurityPolicy(nonce) });
  return reply.code(status).type('text/html; charset=utf-8').send(render(nonce));
}

/** Sends a page with a fresh nonce and the token-route headers. */
export function sendPage(reply: FastifyReply, page: Page): FastifyReply {
  return sendHtml(reply, page.status, (nonce) => renderPage(page, nonce));
}

/** The answer to a form post: back to a page with 303, so a reload does not post again. */
export function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  reply.headers(TOKEN_ROUTE_HEADERS);
  return reply.code(303).header('Location', location).send();
}
