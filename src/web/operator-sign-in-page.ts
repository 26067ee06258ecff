import { html } from './html.ts';
import { type ConsoleNav, type Notice, noticeBlock, type OperatorPage } from './operator-layout.ts';

export interface SignInForm {
  csrf: string;
  next: string;
  notice?: Notice;
  /** Marks the key field invalid (a refused key). */
  keyRefused?: boolean;
}

/** The sign-in form. The pasted key is never echoed back, even after a refusal. */
export function signInPage(form: SignInForm, status = 200): OperatorPage {
  return {
    status,
    title: 'Operator sign-in',
    body: html`${noticeBlock(form.notice)}
<section class="card" aria-labelledby="sign-in-title">
<h1 id="sign-in-title">Operator sign-in</h1>
<p class="muted">The console is for the service operator, who decides disputes and verifies businesses. Merchant keys cannot sign in.</p>
<form method="post" action="/operator/sign-in" autocomplete="off">
<input type="hidden" name="csrf_token" value="${form.csrf}">
<input type="hidden" name="next" value="${form.next}">
<label for="key">Operator key</label>
<span class="hint" id="key-hint">It starts with sk_op_. It is checked once; the browser keeps only a signed session cookie, valid for 8 hours.</span>
<input id="key" name="key" type="password" required autocomplete="off" spellcheck="false" autocapitalize="off" aria-describedby="key-hint"${form.keyRefused ? html` aria-invalid="true"` : null}>
<button type="submit">Sign in</button>
</form>
</section>`,
  };
}

export function signOutPage(nav: ConsoleNav): OperatorPage {
  return {
    status: 200,
    title: 'Sign out',
    nav,
    body: html`<section class="card" aria-labelledby="sign-out-title">
<h1 id="sign-out-title">Sign out of the console?</h1>
<form method="post" action="/operator/sign-out">
<input type="hidden" name="csrf_token" value="${nav.csrf}">
<button type="submit">Sign out</button>
</form>
</section>`,
  };
}
