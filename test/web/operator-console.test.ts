import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { authenticate } from '../../src/operations/authenticate.ts';
import { addEvidence } from '../../src/operations/dispute-evidence.ts';
import { createDispute } from '../../src/operations/dispute-open.ts';
import { loadDisputeView } from '../../src/operations/dispute-view.ts';
import { createOperatorKey, revokeKey } from '../../src/operations/manage-keys.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import type { MerchantPrincipal } from '../../src/operations/principal.ts';
import { advanceTestClock } from '../../src/store/merchant-clock.ts';
import { json, startHarness } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

interface Browser {
  /** Cookie header value: name=value pairs kept like a browser keeps them. */
  cookies: Map<string, string>;
}

/** Applies Set-Cookie headers to the jar (Max-Age=0 deletes). */
function keep(jar: Browser, res: LightMyRequestResponse): void {
  const raw = res.headers['set-cookie'];
  for (const line of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
    const [pair = ''] = line.split(';');
    const at = pair.indexOf('=');
    const name = pair.slice(0, at);
    if (/Max-Age=0(;|$)/.test(line)) jar.cookies.delete(name);
    else jar.cookies.set(name, pair.slice(at + 1));
  }
}

function cookieHeader(jar: Browser): string {
  return [...jar.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
}

function csrfIn(body: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(body);
  if (!match?.[1]) throw new Error('no csrf_token on the page');
  return match[1];
}

describe('the operator console', () => {
  const h = suiteHarness({ operatorKey: true });

  const get = (jar: Browser, url: string) =>
    h.request({ method: 'GET', url, key: null, headers: { cookie: cookieHeader(jar) } });
  const post = (jar: Browser, url: string, fields: Record<string, string>) =>
    h.request({
      method: 'POST',
      url,
      key: null,
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });

  /** Opens the sign-in form and sends a key: the answer and the browser's cookies afterwards. */
  async function trySignIn(key: string): Promise<{ res: LightMyRequestResponse; jar: Browser }> {
    const jar: Browser = { cookies: new Map() };
    const form = await get(jar, '/operator/sign-in');
    assert.equal(form.statusCode, 200);
    keep(jar, form);
    const res = await post(jar, '/operator/sign-in', { key, csrf_token: csrfIn(form.body), next: '' });
    keep(jar, res);
    return { res, jar };
  }

  async function signIn(key = h.operatorKey): Promise<Browser> {
    const { res, jar } = await trySignIn(key);
    assert.equal(res.statusCode, 303, res.body);
    return jar;
  }

  /** The CSRF token a signed-in page carries. */
  async function tokenOf(jar: Browser): Promise<string> {
    const page = await get(jar, '/operator/disputes');
    assert.equal(page.statusCode, 200);
    return csrfIn(page.body);
  }

  async function principalOf(merchant: CreatedMerchant): Promise<MerchantPrincipal> {
    const principal = await authenticate(h.ctx, `Bearer ${merchant.test_key}`);
    assert.equal(principal.kind, 'merchant');
    return principal as MerchantPrincipal;
  }

  /** A paid test transaction of the merchant with a dispute opened by the merchant. */
  async function disputed(
    merchant: CreatedMerchant = h.merchant,
    amount = 1000,
    card = '4242424242424242',
  ): Promise<{ transactionId: string; disputeId: string }> {
    const created = await h.request({
      method: 'POST',
      url: '/v1/transactions',
      key: merchant.test_key,
      payload: {
        amount,
        currency: 'KES',
        title: 'Blue sofa',
        customer: { name: 'Amina', email: 'amina@example.com' },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const transactionId = String(json(created).service_transaction_id);
    const paid = await h.request({
      method: 'POST',
      url: `/v1/test_helpers/transactions/${transactionId}/pay`,
      key: merchant.test_key,
      payload: { method: 'card', card_number: card },
    });
    assert.equal(paid.statusCode, 200, paid.body);
    const { dispute } = await createDispute(
      h.ctx,
      await principalOf(merchant),
      {
        service_transaction_id: transactionId,
        reason: 'damaged',
        description: 'Arrived with a torn cushion.',
      },
      undefined,
    );
    return { transactionId, disputeId: dispute.id };
  }

  const transaction = async (id: string) =>
    json(await h.request({ method: 'GET', url: `/v1/transactions/${id}` }));

  describe('signing in', () => {
    it('serves the sign-in form with the page headers and a sign-in cookie', async () => {
      const res = await h.request({ method: 'GET', url: '/operator/sign-in', key: null });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(String(res.headers['content-security-policy']), /script-src 'nonce-[^']+'/);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.match(res.body, /<input id="key" name="key" type="password"/);
      assert.match(
        String(res.headers['set-cookie']),
        /^safehold_operator_sign_in=[\w-]+; Path=\/operator; Max-Age=3600; HttpOnly; SameSite=Strict$/,
      );
    });

    it('signs in with the operator key: a signed HttpOnly, SameSite=Strict session cookie for /operator', async () => {
      const { res, jar } = await trySignIn(h.operatorKey);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/operator/disputes');
      const cookies = [res.headers['set-cookie']].flat().map(String);
      const session = cookies.find((c) => c.startsWith('safehold_operator='));
      assert.ok(session, 'a session cookie');
      assert.match(session, /; Path=\/operator; Max-Age=28800; HttpOnly; SameSite=Strict$/);
      assert.ok(!session.includes(h.operatorKey), 'the key itself is not in the cookie');
      assert.ok(!jar.cookies.has('safehold_operator_sign_in'), 'the sign-in cookie is cleared');
      const queue = await get(jar, '/operator/disputes');
      assert.equal(queue.statusCode, 200);
      assert.match(queue.body, /<h1>Dispute queue<\/h1>/);
      const again = await get(jar, '/operator/sign-in?next=/operator/merchants');
      assert.equal(again.statusCode, 303, 'signed in already: straight on');
      assert.equal(again.headers.location, '/operator/merchants');
    });

    it('returns to the page asked for, and only to console pages', async () => {
      const jar: Browser = { cookies: new Map() };
      const form = await get(jar, '/operator/sign-in?next=/operator/merchants');
      keep(jar, form);
      assert.match(form.body, /name="next" value="\/operator\/merchants"/);
      const res = await post(jar, '/operator/sign-in', {
        key: h.operatorKey,
        csrf_token: csrfIn(form.body),
        next: '/operator/merchants',
      });
      assert.equal(res.headers.location, '/operator/merchants');

      const jar2: Browser = { cookies: new Map() };
      const form2 = await get(jar2, '/operator/sign-in');
      keep(jar2, form2);
      const evil = await post(jar2, '/operator/sign-in', {
        key: h.operatorKey,
        csrf_token: csrfIn(form2.body),
        next: '//evil.example/operator',
      });
      assert.equal(evil.headers.location, '/operator/disputes');
    });

    it('refuses a wrong key, a malformed key and a revoked key without a session', async () => {
      const revoked = await createOperatorKey(h.ctx);
      await revokeKey(h.ctx, revoked.key_id);
      for (const [key, message] of [
        [`sk_op_${'x'.repeat(40)}`, /Invalid API key/],
        ['not-a-key', /Malformed API key/],
        [revoked.key, /revoked/],
      ] as const) {
        const { res, jar } = await trySignIn(key);
        assert.equal(res.statusCode, 401, key);
        assert.match(res.body, /Key refused/);
        assert.match(res.body, message);
        assert.ok(!res.body.includes(key), 'the pasted key is not echoed');
        assert.ok(!jar.cookies.has('safehold_operator'));
      }
    });

    it('refuses a merchant key (test or live) with a clear message', async () => {
      for (const key of [h.merchant.test_key, h.merchant.live_key]) {
        const { res, jar } = await trySignIn(key);
        assert.equal(res.statusCode, 403);
        assert.match(res.body, /Merchant keys cannot sign in/);
        assert.match(res.body, /sign in with an sk_op_ key/);
        assert.ok(!jar.cookies.has('safehold_operator'));
      }
    });

    it('refuses a sign-in post without the form token or its cookie', async () => {
      const jar: Browser = { cookies: new Map() };
      const form = await get(jar, '/operator/sign-in');
      const token = csrfIn(form.body);
      // The token without the cookie it is bound to, and the cookie without a token.
      const noCookie = await post(jar, '/operator/sign-in', { key: h.operatorKey, csrf_token: token });
      assert.equal(noCookie.statusCode, 403);
      assert.match(noCookie.body, /The sign-in form expired/);
      keep(jar, form);
      const noToken = await post(jar, '/operator/sign-in', { key: h.operatorKey });
      assert.equal(noToken.statusCode, 403);
      for (const res of [noCookie, noToken]) {
        assert.ok(
          ![res.headers['set-cookie']].flat().some((c) => String(c).startsWith('safehold_operator=')),
        );
      }
    });

    it('marks the cookies Secure when the public URL is https', async () => {
      const secure = await startHarness({ publicUrl: 'https://pay.example.com' });
      try {
        const key = (await createOperatorKey(secure.ctx)).key;
        const form = await secure.request({ method: 'GET', url: '/operator/sign-in', key: null });
        assert.match(String(form.headers['set-cookie']), /; Secure$/);
        const nonce = String(form.headers['set-cookie']).split(';')[0] ?? '';
        const res = await secure.request({
          method: 'POST',
          url: '/operator/sign-in',
          key: null,
          headers: { cookie: nonce, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ key, csrf_token: csrfIn(form.body) }).toString(),
        });
        assert.equal(res.statusCode, 303);
        const session = [res.headers['set-cookie']]
          .flat()
          .map(String)
          .find((c) => c.startsWith('safehold_operator='));
        assert.match(String(session), /HttpOnly; SameSite=Strict; Secure$/);
      } finally {
        await secure.close();
      }
    });

    it('signs out with a POST carrying the token; the cookie is cleared', async () => {
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const page = await get(jar, '/operator/sign-out');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Sign out of the console\?/);
      const res = await post(jar, '/operator/sign-out', { csrf_token: csrf });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/operator/sign-in?signed_out=1');
      keep(jar, res);
      assert.ok(!jar.cookies.has('safehold_operator'));
      const after = await get(jar, '/operator/disputes');
      assert.equal(after.statusCode, 303);
    });
  });

  describe('the session', () => {
    it('is required: pages redirect to sign-in (remembering where to return), posts change nothing', async () => {
      const { disputeId, transactionId } = await disputed();
      const nobody: Browser = { cookies: new Map() };
      for (const url of [
        '/operator',
        '/operator/disputes',
        '/operator/merchants',
        `/operator/disputes/${disputeId}`,
        `/operator/disputes/${disputeId}/evidence/evd_x`,
        '/operator/sign-out',
      ]) {
        const res = await get(nobody, url);
        assert.equal(res.statusCode, 303, url);
        assert.match(String(res.headers.location), /^\/operator\/sign-in/, url);
      }
      assert.equal(
        (await get(nobody, `/operator/disputes/${disputeId}`)).headers.location,
        `/operator/sign-in?next=%2Foperator%2Fdisputes%2F${disputeId}`,
      );
      const res = await post(nobody, `/operator/disputes/${disputeId}/resolve`, { decision: 'buyer' });
      assert.equal(res.statusCode, 303);
      assert.equal((await transaction(transactionId)).status, 'disputed');
    });

    it('refuses a tampered cookie, and clears it', async () => {
      const jar = await signIn();
      const value = jar.cookies.get('safehold_operator') ?? '';
      const parts = value.split('.');
      const other = await createOperatorKey(h.ctx);
      const otherId = other.key_id;
      const tampered = [
        [parts[0], otherId, ...parts.slice(2)].join('.'), // another key id, same signature
        [...parts.slice(0, 2), String(Date.now() + 1e12), ...parts.slice(3)].join('.'), // a later expiry
        `${value.slice(0, -2)}AA`, // a changed signature
        'v1.garbage',
      ];
      for (const cookie of tampered) {
        const forged: Browser = { cookies: new Map([['safehold_operator', cookie]]) };
        const res = await get(forged, '/operator/disputes');
        assert.equal(res.statusCode, 303, cookie);
        assert.equal(res.headers.location, '/operator/sign-in?next=%2Foperator%2Fdisputes&ended=1');
        assert.match(String(res.headers['set-cookie']), /^safehold_operator=; Path=\/operator; Max-Age=0/);
      }
      assert.equal((await get(jar, '/operator/disputes')).statusCode, 200, 'the real cookie still works');
    });

    it('expires after 8 hours', async () => {
      const jar = await signIn();
      h.clock.advance(8 * 60 * 60 - 5);
      assert.equal((await get(jar, '/operator/disputes')).statusCode, 200);
      h.clock.advance(10);
      const res = await get(jar, '/operator/disputes');
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/operator/sign-in?next=%2Foperator%2Fdisputes&ended=1');
      const signInAgain = await get({ cookies: new Map() }, '/operator/sign-in?ended=1');
      assert.match(signInAgain.body, /Please sign in again/);
    });

    it('ends at once when the operator key is revoked', async () => {
      const issued = await createOperatorKey(h.ctx);
      const jar = await signIn(issued.key);
      assert.equal((await get(jar, '/operator/disputes')).statusCode, 200);
      await revokeKey(h.ctx, issued.key_id);
      const res = await get(jar, '/operator/disputes');
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/operator/sign-in?next=%2Foperator%2Fdisputes&ended=1');
    });

    it('refuses a POST without the session CSRF token, or with another session’s, changing nothing', async () => {
      const { disputeId, transactionId } = await disputed();
      const jar = await signIn();
      const otherToken = await tokenOf(await signIn());
      const attempts: Record<string, string>[] = [
        { decision: 'buyer' },
        { decision: 'buyer', csrf_token: '' },
        { decision: 'buyer', csrf_token: otherToken },
      ];
      for (const fields of attempts) {
        const res = await post(jar, `/operator/disputes/${disputeId}/resolve`, fields);
        assert.equal(res.statusCode, 403);
        assert.match(res.body, /This form was refused/);
      }
      const merchant = await h.newMerchant();
      const refused = await post(jar, `/operator/merchants/${merchant.merchant_id}/verification`, {
        decision: 'verified',
        csrf_token: otherToken,
      });
      assert.equal(refused.statusCode, 403);
      assert.equal((await transaction(transactionId)).status, 'disputed');
      const live = await h.request({ method: 'GET', url: '/v1/transactions', key: merchant.live_key });
      assert.equal(live.statusCode, 403);
    });
  });

  describe('the dispute queue', () => {
    it('lists undecided disputes of every merchant by deadline, soonest first, overdue highlighted', async () => {
      const ahead = await h.newMerchant({ name: 'Ahead Clock Ltd' });
      await advanceTestClock(h.ctx.db, ahead.merchant_id, 2 * 24 * 60 * 60 * 1000);
      const later = await disputed(ahead); // due in 9 days of system time, opened first
      h.clock.advance(60);
      const soon = await disputed(h.merchant);
      h.clock.advance(60);
      const lateMerchant = await h.newMerchant({ name: 'Late Shop' });
      const overdue = await disputed(lateMerchant);
      // Its merchant's clock passes the deadline (the deadline job has not run yet).
      await advanceTestClock(h.ctx.db, lateMerchant.merchant_id, 8 * 24 * 60 * 60 * 1000);
      const decided = await disputed();
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const resolved = await post(jar, `/operator/disputes/${decided.disputeId}/resolve`, {
        csrf_token: csrf,
        decision: 'seller',
        idempotency_key: 'queue-test',
      });
      assert.equal(resolved.statusCode, 303);

      const page = await get(jar, '/operator/disputes');
      assert.equal(page.statusCode, 200);
      const at = (id: string) => page.body.indexOf(`href="/operator/disputes/${id}"`);
      assert.ok(at(soon.disputeId) > 0 && at(overdue.disputeId) > 0 && at(later.disputeId) > 0);
      assert.ok(at(soon.disputeId) < at(overdue.disputeId), 'earlier deadline first');
      assert.ok(at(overdue.disputeId) < at(later.disputeId), 'by deadline, not by creation');
      assert.equal(at(decided.disputeId), -1, 'decided disputes leave the queue');

      const rowOf = (id: string) => {
        const start = page.body.lastIndexOf('<tr', at(id));
        return page.body.slice(start, page.body.indexOf('</tr>', start));
      };
      assert.match(rowOf(overdue.disputeId), /^<tr class="overdue">/);
      assert.match(rowOf(overdue.disputeId), /Overdue/);
      assert.doesNotMatch(rowOf(soon.disputeId), /Overdue/);
      assert.match(rowOf(soon.disputeId), /Merchant 1/);
      assert.match(rowOf(later.disputeId), /Ahead Clock Ltd/);
      assert.match(rowOf(soon.disputeId), /KES\u00a01,000\.00/);
      assert.match(rowOf(soon.disputeId), /Damaged/);
      assert.match(rowOf(soon.disputeId), /Open: collecting evidence/);
      assert.match(rowOf(soon.disputeId), /<span class="badge test">Test<\/span>/);

      const liveOnly = await get(jar, '/operator/disputes?env=live');
      assert.equal(liveOnly.statusCode, 200);
      assert.ok(!liveOnly.body.includes(soon.disputeId), 'test disputes filtered out');
      assert.match(liveOnly.body, /No undecided disputes in live mode/);
    });
  });

  describe('the case page', () => {
    it('shows the dispute, both sides’ evidence with the file, the history and the ledger', async () => {
      const { disputeId, transactionId } = await disputed(h.merchant, 2500);
      await addEvidence(h.ctx, disputeId, 'buyer', { kind: 'file', fileName: 'cushion.png', data: PNG });
      await addEvidence(h.ctx, disputeId, 'buyer', { kind: 'text', content: 'The <b>seam</b> is torn.' });
      await addEvidence(h.ctx, disputeId, 'seller', { kind: 'url', content: 'https://example.com/photo' });
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const noted = await post(jar, `/operator/disputes/${disputeId}/notes`, {
        csrf_token: csrf,
        content: 'Called the seller.',
      });
      assert.equal(noted.statusCode, 303);
      assert.equal(noted.headers.location, `/operator/disputes/${disputeId}?noted=1#evidence-operator`);

      const page = await get(jar, `/operator/disputes/${disputeId}`);
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['cache-control'], 'no-store');
      const body = page.body;
      assert.match(body, new RegExp(`Dispute <code>${disputeId}</code>`));
      assert.match(body, /Arrived with a torn cushion\./);
      assert.match(body, /KES\u00a02,500\.00/);
      const section = (id: string) =>
        body.slice(body.indexOf(`id="${id}"`), body.indexOf('</section>', body.indexOf(`id="${id}"`)));
      const buyer = section('evidence-buyer');
      const fileLink =
        /<a href="(\/operator\/disputes\/[^"]+\/evidence\/evd_[^"]+)" download>cushion\.png<\/a>/.exec(buyer);
      assert.ok(fileLink?.[1], 'the buyer’s file is linked');
      assert.match(buyer, /<img class="evidence" src="\/operator\/disputes\/[^"]+"/);
      assert.match(buyer, /The &lt;b&gt;seam&lt;\/b&gt; is torn\./, 'evidence text is escaped');
      assert.match(
        section('evidence-seller'),
        /href="https:\/\/example\.com\/photo" rel="noopener noreferrer nofollow"/,
      );
      assert.match(section('evidence-operator'), /Called the seller\./);

      const history = section('history-title');
      assert.match(history, /transaction\.created/);
      assert.match(history, /pending_payment → reserved \(pending_confirmation\)/);
      assert.match(history, /reserved → disputed \(under_review\)/);
      assert.match(history, /dispute\.opened/);
      const ledger = section('ledger-title');
      assert.match(
        ledger,
        /<code>capture<\/code><\/td><td data-label="Debit"><code>rail_clearing<\/code><\/td><td data-label="Credit"><code>escrow_held<\/code>/,
      );

      const file = await get(jar, fileLink[1]);
      assert.equal(file.statusCode, 200);
      assert.deepEqual(file.rawPayload, PNG);
      assert.equal(file.headers['content-type'], 'image/png');
      assert.match(String(file.headers['content-disposition']), /^attachment; filename="cushion\.png"$/);
      assert.equal(file.headers['x-content-type-options'], 'nosniff');
      assert.match(String(file.headers['content-security-policy']), /sandbox/);
      assert.equal(file.headers['cross-origin-resource-policy'], 'same-origin');
      assert.equal((await get(jar, `/operator/disputes/${disputeId}/evidence/evd_nope`)).statusCode, 404);
      assert.equal(
        (await get({ cookies: new Map() }, fileLink[1])).statusCode,
        303,
        'files need the session',
      );
      assert.equal((await transaction(transactionId)).status, 'disputed');
    });

    it('answers an unknown dispute with a 404 page', async () => {
      const jar = await signIn();
      const res = await get(jar, '/operator/disputes/dsp_00000000000000000000000000');
      assert.equal(res.statusCode, 404);
      assert.match(res.body, /No dispute has the id/);
    });

    it('resolves a split through the form: the money moves, the outcome shows, a resend replays', async () => {
      const { disputeId, transactionId } = await disputed(h.merchant, 1000);
      const jar = await signIn();
      const casePage = await get(jar, `/operator/disputes/${disputeId}`);
      const csrf = csrfIn(casePage.body);
      const key = /name="idempotency_key" value="([^"]+)"/.exec(casePage.body)?.[1] ?? '';
      assert.ok(key);
      const fields = {
        csrf_token: csrf,
        idempotency_key: key,
        decision: 'split',
        amount_to_seller: '600',
        amount_to_buyer: '',
        note: 'Partly damaged.',
      };
      const res = await post(jar, `/operator/disputes/${disputeId}/resolve`, fields);
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `/operator/disputes/${disputeId}?resolved=1#outcome-title`);

      const t = await transaction(transactionId);
      assert.equal(t.status, 'confirmed');
      assert.equal(t.settlement_status, 'approved_for_release');
      assert.equal(t.amount_released, 600);
      assert.equal(t.amount_refunded, 400);
      const dispute = await loadDisputeView(h.ctx, disputeId);
      assert.equal(dispute?.status, 'resolved');
      assert.equal(dispute?.outcome?.decision, 'split');
      assert.equal(dispute?.outcome?.amount_to_seller_minor, 60000);
      assert.equal(dispute?.outcome?.amount_to_buyer_minor, 40000);
      assert.equal(dispute?.outcome?.note, 'Partly damaged.');

      const page = await get(jar, `/operator/disputes/${disputeId}?resolved=1`);
      assert.match(page.body, /Decision recorded/);
      assert.match(page.body, /Outcome: Split/);
      assert.match(page.body, /<dt>To the seller<\/dt><dd>KES\u00a0600\.00<\/dd>/);
      assert.match(page.body, /<dt>To the buyer<\/dt><dd>KES\u00a0400\.00<\/dd>/);
      assert.match(page.body, /Partly damaged\./);
      assert.match(page.body, /<dd id="dispute-status">Resolved<\/dd>/);
      assert.match(page.body, /under_review → confirmed \(approved_for_release\)/);
      assert.match(page.body, /<code>approve<\/code>/);
      assert.match(page.body, /<code>refund<\/code>/);
      assert.ok(!page.body.includes('Record decision'), 'no resolve form once decided');

      const again = await post(jar, `/operator/disputes/${disputeId}/resolve`, fields);
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, `/operator/disputes/${disputeId}?replayed=1#outcome-title`);
      const fresh = await post(jar, `/operator/disputes/${disputeId}/resolve`, {
        ...fields,
        idempotency_key: 'another-form',
        decision: 'buyer',
        amount_to_seller: '',
      });
      assert.equal(fresh.statusCode, 409);
      assert.match(fresh.body, /The decision was not recorded/);
      assert.match(fresh.body, /already resolved/);
      const still = await transaction(transactionId);
      assert.equal(still.amount_released, 600);
      assert.equal(still.amount_refunded, 400);
      await assertLedgerSound(h.ctx.db);
    });

    it('shows a bad split or a missing decision on the page (400), deciding nothing', async () => {
      const { disputeId, transactionId } = await disputed(h.merchant, 1000);
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const cases = [
        [
          { decision: 'split', amount_to_seller: '1000' },
          /must be below the amount held/,
          'amount_to_seller',
        ],
        [
          { decision: 'split', amount_to_seller: '600', amount_to_buyer: '500' },
          /must add up/,
          'amount_to_buyer',
        ],
        [{ decision: 'split', amount_to_seller: '12,3.4.5' }, /must be an amount/, 'amount_to_seller'],
        [{ decision: 'split', amount_to_seller: '0.001' }, /amount_to_seller/, 'amount_to_seller'],
        [{ decision: 'split' }, /needs amount_to_seller or amount_to_buyer/, 'amount_to_seller'],
        [{}, /Choose a decision/, null],
      ] as const;
      for (const [fields, message, invalidField] of cases) {
        const res = await post(jar, `/operator/disputes/${disputeId}/resolve`, {
          csrf_token: csrf,
          ...fields,
        });
        assert.equal(res.statusCode, 400, JSON.stringify(fields));
        assert.match(res.body, /The decision was not recorded/);
        assert.match(res.body, message);
        if (invalidField) {
          assert.match(
            res.body,
            new RegExp(`id="${invalidField}" name="${invalidField}"[^>]*aria-invalid="true"`),
          );
        }
        assert.match(res.body, /Record decision/, 'the form is shown again');
      }
      assert.equal((await transaction(transactionId)).status, 'disputed');
    });

    it('resolves for the buyer: the whole amount is refunded', async () => {
      const { disputeId, transactionId } = await disputed(h.merchant, 800);
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const res = await post(jar, `/operator/disputes/${disputeId}/resolve`, {
        csrf_token: csrf,
        decision: 'buyer',
        amount_to_seller: '100', // ignored: amounts belong to a split
      });
      assert.equal(res.statusCode, 303, res.body);
      const t = await transaction(transactionId);
      assert.equal(t.status, 'refunded');
      assert.equal(t.amount_refunded, 800);
      const page = await get(jar, `/operator/disputes/${disputeId}`);
      assert.match(page.body, /Outcome: For the buyer/);
      assert.match(page.body, /<h3>Refunds<\/h3>/);
      await assertLedgerSound(h.ctx.db);
    });
  });

  describe('a refund the rail refuses', () => {
    it('puts the case back in the queue and on its page to be decided again', async () => {
      // The test card ending 5126 takes payments but refuses refunds.
      const { disputeId, transactionId } = await disputed(h.merchant, 450, '4000000000005126');
      const jar = await signIn();
      const csrf = await tokenOf(jar);
      const first = await post(jar, `/operator/disputes/${disputeId}/resolve`, {
        csrf_token: csrf,
        decision: 'buyer',
      });
      assert.equal(first.statusCode, 303, first.body);
      const decided = await get(jar, `/operator/disputes/${disputeId}`);
      assert.ok(!decided.body.includes('Record decision'), 'decided: no form while the refund is pending');
      const settled = await h.request({
        method: 'POST',
        url: '/v1/test_helpers/clock/advance',
        payload: { seconds: 1 },
      });
      assert.equal(settled.statusCode, 200, settled.body);
      assert.equal((await transaction(transactionId)).status, 'under_review');

      const queue = await get(jar, '/operator/disputes');
      const at = queue.body.indexOf(`href="/operator/disputes/${disputeId}"`);
      assert.ok(at > 0, 'back in the queue');
      assert.match(queue.body.slice(at, queue.body.indexOf('</tr>', at)), /Refund refused: decide again/);

      const page = await get(jar, `/operator/disputes/${disputeId}`);
      assert.match(page.body, /The buyer's refund was refused: decide again/);
      assert.match(page.body, /<strong>failed<\/strong>/);
      assert.match(page.body, /Record decision/);
      const again = await post(jar, `/operator/disputes/${disputeId}/resolve`, {
        csrf_token: csrf,
        decision: 'seller',
        note: 'The refund could not be paid.',
      });
      assert.equal(again.statusCode, 303, again.body);
      const t = await transaction(transactionId);
      assert.equal(t.status, 'confirmed');
      assert.equal(t.amount_released, 450);
      const final = await get(jar, `/operator/disputes/${disputeId}`);
      assert.match(final.body, /Outcome: For the seller/);
      assert.ok(!final.body.includes('Record decision'));
      assert.ok(!(await get(jar, '/operator/disputes')).body.includes(`/operator/disputes/${disputeId}"`));
      await assertLedgerSound(h.ctx.db);
    });
  });

  describe('business verification', () => {
    it('lists unverified and pending businesses; approving lets the live key work, rejecting keeps it refused', async () => {
      const approve = await h.newMerchant({ name: 'Approve Me Ltd' });
      const reject = await h.newMerchant({ name: 'Reject Me Ltd' });
      const done = await h.newMerchant({ name: 'Already Verified', verified: true });
      const liveList = (m: CreatedMerchant) =>
        h.request({ method: 'GET', url: '/v1/transactions', key: m.live_key });
      assert.equal((await liveList(approve)).statusCode, 403);

      const jar = await signIn();
      const page = await get(jar, '/operator/merchants');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Approve Me Ltd/);
      assert.match(page.body, /Reject Me Ltd/);
      assert.ok(!page.body.includes('Already Verified'));
      const csrf = csrfIn(page.body);

      const approved = await post(jar, `/operator/merchants/${approve.merchant_id}/verification`, {
        csrf_token: csrf,
        decision: 'verified',
      });
      assert.equal(approved.statusCode, 303);
      assert.equal(
        approved.headers.location,
        `/operator/merchants?decided=verified&merchant=${approve.merchant_id}`,
      );
      assert.equal((await liveList(approve)).statusCode, 200);
      const notice = await get(jar, String(approved.headers.location));
      assert.match(notice.body, /Business verified/);
      assert.ok(!notice.body.includes('Approve Me Ltd'), 'decided businesses leave the queue');

      const rejected = await post(jar, `/operator/merchants/${reject.merchant_id}/verification`, {
        csrf_token: csrf,
        decision: 'rejected',
      });
      assert.equal(rejected.statusCode, 303);
      const refused = await liveList(reject);
      assert.equal(refused.statusCode, 403);
      assert.equal(json<{ error: { code: string } }>(refused).error.code, 'permission_denied');
      assert.equal(
        (await h.request({ method: 'GET', url: '/v1/transactions', key: reject.test_key })).statusCode,
        200,
      );

      // A stale page cannot undo a decision; nonsense decisions and unknown merchants change nothing.
      const stale = await post(jar, `/operator/merchants/${approve.merchant_id}/verification`, {
        csrf_token: csrf,
        decision: 'rejected',
      });
      assert.equal(stale.statusCode, 409);
      assert.match(stale.body, /already verified/);
      assert.equal((await liveList(approve)).statusCode, 200);
      const nonsense = await post(jar, `/operator/merchants/${done.merchant_id}/verification`, {
        csrf_token: csrf,
        decision: 'maybe',
      });
      assert.equal(nonsense.statusCode, 400);
      const unknown = await post(jar, '/operator/merchants/mch_00000000000000000000000000/verification', {
        csrf_token: csrf,
        decision: 'verified',
      });
      assert.equal(unknown.statusCode, 404);
    });
  });
});
