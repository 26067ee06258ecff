import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  disputeOn,
  eventsOf,
  type Json,
  multipart,
  PDF,
  PNG,
  paidTransaction,
  transaction,
} from './helpers.ts';

describe('the buyer page: disputes', () => {
  const h = suiteHarness({ operatorKey: true });

  const tokenOf = (buyerLink: string) => new URL(buyerLink).pathname.split('/').pop() ?? '';
  const page = (token: string) => h.request({ method: 'GET', url: `/buyer/${token}`, key: null });
  const post = (
    url: string,
    fields: Record<string, string>,
    file?: { filename: string; contentType: string; data: Buffer },
  ) => {
    const body = multipart(fields, file ? [file] : []);
    h.clock.advance(0.001);
    return h.request({ method: 'POST', url, key: null, headers: body.headers, payload: body.payload });
  };
  const disputesOf = async (txn: string) =>
    json(await h.request({ method: 'GET', url: `/v1/disputes?service_transaction_id=${txn}` }))
      .data as Json[];

  it('offers the dispute form while the money is held: reason, description, optional file, multipart, no script needed', async () => {
    const { buyerLink } = await paidTransaction(h, { deliver: true });
    const token = tokenOf(buyerLink);
    const res = await page(token);
    assert.equal(res.statusCode, 200);
    assert.ok(
      res.body.includes(
        `<form method="post" action="/buyer/${token}/dispute" enctype="multipart/form-data">`,
      ),
    );
    assert.match(res.body, /<select id="reason" name="reason" required>/);
    for (const reason of ['not_received', 'not_as_described', 'damaged', 'unauthorized', 'other']) {
      assert.ok(res.body.includes(`<option value="${reason}"`), reason);
    }
    assert.match(res.body, /<textarea id="description" name="description" required maxlength="5000"/);
    assert.match(res.body, /<input id="dispute-file" name="file" type="file" accept="image\/png,/);
    assert.match(res.body, /<button type="submit" class="danger">Open a dispute<\/button>/);
    // Not before payment.
    const created = json(
      await h.request({ method: 'POST', url: '/v1/transactions', payload: { amount: 5, title: 'x' } }),
    );
    const unpaid = await page(tokenOf(String(created.buyer_link)));
    assert.ok(!unpaid.body.includes('/dispute"'));
  });

  it('opens a dispute with a photo (multipart): 303 back, opened_by buyer, the file is the buyer’s evidence, and the page shows it', async () => {
    const { id, buyerLink } = await paidTransaction(h, {
      deliver: true,
      body: { merchant_reference: 'bp-1' },
    });
    const token = tokenOf(buyerLink);
    const res = await post(
      `/buyer/${token}/dispute`,
      { reason: 'damaged', description: 'The screen is cracked.\nSee the photo.' },
      { filename: 'crack.png', contentType: 'image/png', data: PNG },
    );
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `/buyer/${token}`);
    const t = await transaction(h, id);
    assert.equal(t.status, 'disputed');
    const [d] = await disputesOf(id);
    assert.equal(d?.opened_by, 'buyer');
    assert.equal(d?.reason, 'damaged');
    assert.equal(d?.description, 'The screen is cracked.\nSee the photo.');
    const [evidence] = (d?.evidence ?? []) as Json[];
    assert.equal(evidence?.kind, 'file');
    assert.equal(evidence?.submitted_by, 'buyer');
    assert.equal(evidence?.content_type, 'image/png');
    assert.equal((await eventsOf(h, id, 'dispute.opened')).length, 1);

    const shown = await page(token);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /<h2 id="your-dispute-title">Your dispute<\/h2>/);
    assert.match(shown.body, /Dispute open: your money stays held/);
    assert.match(shown.body, /<dt>Reason<\/dt><dd>It arrived damaged<\/dd>/);
    assert.match(shown.body, /by you<\/dd>/);
    assert.match(shown.body, /<dt>Evidence until<\/dt><dd>[^<]+ UTC<\/dd>/);
    const link = `/buyer/${token}/evidence/${String(evidence?.id)}`;
    assert.ok(shown.body.includes(`<a href="${link}" download>crack.png</a>`));
    assert.ok(!shown.body.includes('Confirm I received it'));
    assert.ok(!shown.body.includes('Open a dispute</button>'));
    assert.match(shown.body, /Add to the dispute<\/button>/);

    // The buyer downloads their own file, with the safe headers.
    const file = await h.request({ method: 'GET', url: link, key: null });
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'image/png');
    assert.equal(file.headers['content-disposition'], 'attachment; filename="crack.png"');
    assert.equal(file.headers['x-content-type-options'], 'nosniff');
    assert.equal(file.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.equal(file.headers['cache-control'], 'private, no-store');
    assert.deepEqual(file.rawPayload, PNG);
    // The merchant sees the buyer's file through the API.
    const api = await h.request({ method: 'GET', url: String(evidence?.content) });
    assert.deepEqual(api.rawPayload, PNG);
  });

  it('adds buyer evidence (a note, a described file) while open; shows the seller’s too; refuses after the deadline', async () => {
    const { id, buyerLink } = await paidTransaction(h, { deliver: true });
    const token = tokenOf(buyerLink);
    const opened = await post(`/buyer/${token}/dispute`, {
      reason: 'not_as_described',
      description: 'Wrong colour.',
    });
    assert.equal(opened.statusCode, 303, opened.body);
    const [d] = await disputesOf(id);
    await h.request({
      method: 'POST',
      url: `/v1/disputes/${String(d?.id)}/evidence`,
      payload: { kind: 'url', content: 'https://shop.example.com/listing/9' },
    });
    const note = await post(`/buyer/${token}/dispute/evidence`, { text: 'I asked for blue <b>not</b> red.' });
    assert.equal(note.statusCode, 303, note.body);
    const withFile = await post(
      `/buyer/${token}/dispute/evidence`,
      { text: 'The order confirmation' },
      { filename: 'order.pdf', contentType: 'application/pdf', data: PDF },
    );
    assert.equal(withFile.statusCode, 303, withFile.body);
    const [after] = await disputesOf(id);
    const evidence = after?.evidence as Json[];
    assert.deepEqual(
      evidence.map((e) => [e.submitted_by, e.kind]),
      [
        ['seller', 'url'],
        ['buyer', 'text'],
        ['buyer', 'file'],
      ],
    );
    assert.equal(evidence[2]?.description, 'The order confirmation');
    const shown = await page(token);
    assert.ok(shown.body.includes('I asked for blue &lt;b&gt;not&lt;/b&gt; red.'), 'escaped');
    assert.match(shown.body, /<strong>The seller<\/strong>/);
    assert.ok(
      shown.body.includes('href="https://shop.example.com/listing/9" rel="noopener noreferrer nofollow"'),
    );

    // An empty form is refused with the page and a message; nothing is added.
    const empty = await post(`/buyer/${token}/dispute/evidence`, { text: '  ' });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /Write a note or choose a file/);
    // A file that is not allowed.
    const bad = await post(
      `/buyer/${token}/dispute/evidence`,
      { text: 'zip' },
      {
        filename: 'a.zip',
        contentType: 'application/zip',
        data: Buffer.from('PK\u0003\u0004xxxx', 'latin1'),
      },
    );
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /PNG, JPEG, GIF, WebP or PDF/);
    assert.ok(bad.body.includes('>zip</textarea>'), 'what was typed is kept');

    await advance(h, 7 * 24 * 3600);
    const late = await post(`/buyer/${token}/dispute/evidence`, { text: 'late' });
    assert.equal(late.statusCode, 409);
    assert.match(late.body, /Evidence cannot be added now/);
    const review = await page(token);
    assert.match(review.body, /Under review by Safehold/);
    assert.ok(!review.body.includes('Add to the dispute</button>'));
    assert.equal((((await disputesOf(id))[0]?.evidence ?? []) as Json[]).length, 3);
  });

  it('shows the outcome once decided', async () => {
    const { id, buyerLink } = await paidTransaction(h, { amount: 200 });
    const token = tokenOf(buyerLink);
    await post(`/buyer/${token}/dispute`, { reason: 'not_received', description: 'Never came.' });
    const [d] = await disputesOf(id);
    const res = await h.request({
      method: 'POST',
      url: `/v1/disputes/${String(d?.id)}/resolve`,
      key: h.operatorKey,
      payload: { decision: 'split', amount_to_buyer: 150, note: 'Partly delivered.' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const shown = await page(token);
    assert.match(shown.body, /Dispute decided/);
    assert.match(shown.body, /KES\u00a0150\.00 is refunded to you and KES\u00a050\.00 goes to the seller/);
    assert.match(shown.body, /Safehold's note: Partly delivered\./);
    await assertLedgerSound(h.ctx.db, h.merchant.merchant_id, 'buyer page split');
  });

  it('refuses bad reports with the form again (400), a second one (409), a file over 5 MiB (413)', async () => {
    const { id, buyerLink } = await paidTransaction(h);
    const token = tokenOf(buyerLink);
    const noReason = await post(`/buyer/${token}/dispute`, { reason: 'bored', description: 'Meh' });
    assert.equal(noReason.statusCode, 400);
    assert.match(noReason.body, /Please check the form/);
    assert.match(noReason.body, />Meh<\/textarea>/);
    const noText = await post(`/buyer/${token}/dispute`, { reason: 'other', description: '' });
    assert.equal(noText.statusCode, 400);
    const big = Buffer.alloc(5 * 1024 * 1024 + 10, 0x41);
    PNG.copy(big);
    const tooBig = await post(
      `/buyer/${token}/dispute`,
      { reason: 'other', description: 'x' },
      {
        filename: 'big.png',
        contentType: 'image/png',
        data: big,
      },
    );
    assert.equal(tooBig.statusCode, 413);
    assert.match(tooBig.body, /5 MiB/);
    assert.equal((await transaction(h, id)).status, 'reserved');
    assert.equal(
      (await post(`/buyer/${token}/dispute`, { reason: 'other', description: 'x' })).statusCode,
      303,
    );
    const second = await post(`/buyer/${token}/dispute`, { reason: 'other', description: 'again' });
    assert.equal(second.statusCode, 409);
    assert.match(second.body, /A dispute cannot be opened now/);
    assert.equal((await disputesOf(id)).length, 1);
  });

  it('serves a buyer only the files of their own purchase’s disputes; bad links get the not-found page', async () => {
    const mine = await paidTransaction(h);
    const theirs = await paidTransaction(h);
    const myToken = tokenOf(mine.buyerLink);
    const theirToken = tokenOf(theirs.buyerLink);
    await post(
      `/buyer/${theirToken}/dispute`,
      { reason: 'other', description: 'x' },
      {
        filename: 'secret.png',
        contentType: 'image/png',
        data: PNG,
      },
    );
    const [d] = await disputesOf(theirs.id);
    const evidenceId = String(((d?.evidence ?? []) as Json[])[0]?.id);
    const stolen = await h.request({
      method: 'GET',
      url: `/buyer/${myToken}/evidence/${evidenceId}`,
      key: null,
    });
    assert.equal(stolen.statusCode, 404);
    assert.ok(!stolen.rawPayload.includes(PNG));
    const own = await h.request({
      method: 'GET',
      url: `/buyer/${theirToken}/evidence/${evidenceId}`,
      key: null,
    });
    assert.equal(own.statusCode, 200);
    const forged = await h.request({
      method: 'GET',
      url: `/buyer/${'A'.repeat(43)}/evidence/${evidenceId}`,
      key: null,
    });
    assert.equal(forged.statusCode, 404);
    const badPost = await post(`/buyer/${'A'.repeat(43)}/dispute`, { reason: 'other', description: 'x' });
    assert.equal(badPost.statusCode, 404);
    assert.match(badPost.body, /Buyer page not found/);
    // A dispute the merchant opened shows on the buyer page too.
    const byMerchant = await paidTransaction(h);
    await disputeOn(h, byMerchant.id);
    const shown = await page(tokenOf(byMerchant.buyerLink));
    assert.match(shown.body, /by the seller<\/dd>/);
  });
});
