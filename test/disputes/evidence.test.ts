import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { SCOPES } from '../../src/domain/api-keys.ts';
import { createKey } from '../../src/operations/manage-keys.ts';
import { assertErrorEnvelope } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import {
  advance,
  disputeOn,
  eventsOf,
  GIF,
  JPEG,
  type Json,
  multipart,
  PDF,
  PNG,
  paidTransaction,
  WEBP,
} from './helpers.ts';

const MIB = 1024 * 1024;

describe('dispute evidence: POST /v1/disputes/{id}/evidence and its files', () => {
  const h = suiteHarness({ operatorKey: true });

  const tick = () => h.clock.advance(0.001);
  const newDispute = async (key = h.merchant.test_key) => {
    const { id } = await paidTransaction(h, { key, deliver: true });
    const d = await disputeOn(h, id, {}, key);
    return { txn: id, id: String(d.id) };
  };
  // Evidence is listed oldest first by time; the test clock moves 1 ms per request to order it.
  const addJson = (id: string, payload: unknown, key?: string, headers?: Record<string, string>) => {
    tick();
    return h.request({
      method: 'POST',
      url: `/v1/disputes/${id}/evidence`,
      payload: payload as Json,
      key,
      headers,
    });
  };
  const upload = (
    id: string,
    file: { filename: string; contentType: string; data: Buffer; name?: string } | null,
    fields: Record<string, string> = {},
    key?: string,
    extraHeaders: Record<string, string> = {},
  ) => {
    const body = multipart(fields, file ? [file] : []);
    tick();
    return h.request({
      method: 'POST',
      url: `/v1/disputes/${id}/evidence`,
      key,
      headers: { ...body.headers, ...extraHeaders },
      payload: body.payload,
    });
  };
  const lastEvidence = (res: LightMyRequestResponse) => (json(res).evidence as Json[]).at(-1) as Json;

  it('adds text and URL evidence as the seller: 200 with the dispute, dispute.updated each time', async () => {
    const d = await newDispute();
    h.clock.advance(1);
    const text = await addJson(d.id, {
      kind: 'text',
      content: 'Tracking shows delivery.\nSigned by the buyer.',
    });
    assert.equal(text.statusCode, 200, text.body);
    const body = json(text);
    assert.equal(body.id, d.id);
    assert.equal(body.object, 'dispute');
    const e = lastEvidence(text);
    assert.equal(e.kind, 'text');
    assert.equal(e.submitted_by, 'seller');
    assert.equal(e.content, 'Tracking shows delivery.\nSigned by the buyer.');
    assert.match(String(e.id), /^evd_/);
    assert.equal(body.updated_at, e.submitted_at);
    const url = await addJson(d.id, { kind: 'url', content: 'http://tracking.example.com/p/123?x=1' });
    assert.equal(url.statusCode, 200, url.body);
    assert.equal(lastEvidence(url).content, 'http://tracking.example.com/p/123?x=1');
    assert.equal((json(url).evidence as Json[]).length, 2);
    const updated = await eventsOf(h, d.txn, 'dispute.updated');
    assert.equal(updated.length, 2);
    const latest = updated[1]?.data as Json | undefined;
    assert.equal((latest?.evidence as Json[] | undefined)?.length, 2);
  });

  it('refuses bad JSON evidence with 400 naming the param', async () => {
    const d = await newDispute();
    const cases: [unknown, string][] = [
      [{ kind: 'url', content: 'ftp://files.example.com/x' }, 'content'],
      [{ kind: 'url', content: '/relative/path' }, 'content'],
      [{ kind: 'url', content: 'https://user:pw@example.com/' }, 'content'],
      [{ kind: 'url', content: `https://example.com/${'a'.repeat(2100)}` }, 'content'],
      [{ kind: 'text', content: '' }, 'content'],
      [{ kind: 'text', content: 'bell\u0007' }, 'content'],
      [{ kind: 'text', content: 'x'.repeat(5001) }, 'content'],
      [{ kind: 'file', content: 'x' }, 'kind'],
      [{ kind: 'text' }, 'content'],
      [{ content: 'x' }, 'kind'],
      [{ kind: 'text', content: 'x', more: 1 }, 'more'],
      [{}, 'kind'],
    ];
    for (const [payload, param] of cases) {
      const res = await addJson(d.id, payload);
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, param, `${JSON.stringify(payload).slice(0, 60)}: ${res.body}`);
    }
    // A POST with no body at all.
    const empty = await h.request({ method: 'POST', url: `/v1/disputes/${d.id}/evidence` });
    assert.equal(assertErrorEnvelope(empty, 400, 'invalid_request', 'invalid_request').param, 'kind');
    const xml = await h.request({
      method: 'POST',
      url: `/v1/disputes/${d.id}/evidence`,
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    assertErrorEnvelope(xml, 415, 'invalid_request', 'invalid_request');
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.deepEqual(view.evidence, []);
  });

  it('stores an uploaded file by the type its bytes show, and serves it with safe headers, even if the upload claimed text/html', async () => {
    const d = await newDispute();
    const res = await upload(
      d.id,
      { filename: '../../réçu <1>.html', contentType: 'text/html', data: PNG },
      { description: 'The box as it arrived' },
    );
    assert.equal(res.statusCode, 200, res.body);
    const e = lastEvidence(res);
    assert.equal(e.kind, 'file');
    assert.equal(e.submitted_by, 'seller');
    assert.equal(e.content_type, 'image/png');
    assert.equal(e.size_bytes, PNG.length);
    assert.equal(e.file_name, 'recu _1_.html.png');
    assert.equal(e.description, 'The box as it arrived');
    assert.equal(e.content, `/v1/disputes/${d.id}/evidence/${e.id}/file`);

    const file = await h.request({ method: 'GET', url: String(e.content) });
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers['content-type'], 'image/png');
    assert.equal(file.headers['content-disposition'], 'attachment; filename="recu _1_.html.png"');
    assert.equal(file.headers['x-content-type-options'], 'nosniff');
    assert.equal(file.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.equal(file.headers['cache-control'], 'private, no-store');
    assert.deepEqual(file.rawPayload, PNG);

    // HTML is text: kept as text/plain, named .txt, never served as a page.
    const html = Buffer.from('<html><script>alert(document.cookie)</script></html>');
    const asText = await upload(d.id, { filename: 'page.html', contentType: 'text/html', data: html });
    assert.equal(asText.statusCode, 200, asText.body);
    const t = lastEvidence(asText);
    assert.equal(t.content_type, 'text/plain; charset=utf-8');
    assert.equal(t.file_name, 'page.html.txt');
    const served = await h.request({ method: 'GET', url: String(t.content) });
    assert.equal(served.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(String(served.headers['content-disposition']), /^attachment; filename="page\.html\.txt"$/);
    assert.equal(served.body, html.toString());
  });

  it('recognises JPEG, GIF, WebP, PDF and UTF-8 text by their bytes, and refuses anything else (400 param file)', async () => {
    const d = await newDispute();
    const accepted: [Buffer, string, string][] = [
      [JPEG, 'image/jpeg', 'a.jpeg'],
      [GIF, 'image/gif', 'a.gif'],
      [WEBP, 'image/webp', 'a.webp'],
      [PDF, 'application/pdf', 'a.pdf'],
      [Buffer.from('Olá, señor — 受け取りました\r\n'), 'text/plain; charset=utf-8', 'a.txt'],
    ];
    for (const [data, type, name] of accepted) {
      // The client's type is wrong on purpose: only the bytes count.
      const res = await upload(d.id, { filename: name, contentType: 'application/octet-stream', data });
      assert.equal(res.statusCode, 200, `${type}: ${res.body}`);
      assert.equal(lastEvidence(res).content_type, type);
      assert.equal(lastEvidence(res).file_name, name);
    }
    const refused: [Buffer, string][] = [
      [Buffer.from('PK\u0003\u0004zipzipzip', 'latin1'), 'archive.zip'],
      [Buffer.from('MZ\u0090\u0000\u0003\u0000', 'latin1'), 'setup.exe'],
      [Buffer.from([0xc3, 0x28, 0x41]), 'broken-utf8.txt'],
      [Buffer.from('text with a NUL \u0000 inside'), 'nul.txt'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').subarray(0, 0), 'empty.svg'],
    ];
    for (const [data, name] of refused) {
      const res = await upload(d.id, { filename: name, contentType: 'image/png', data });
      const error = assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request');
      assert.equal(error.param, 'file', name);
    }
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.equal((view.evidence as Json[]).length, accepted.length);
  });

  it('takes a file of exactly 5 MiB and answers 413 above it; one file per request, only known fields', async () => {
    const d = await newDispute();
    const big = Buffer.alloc(5 * MIB, 0x41);
    PNG.copy(big);
    const ok = await upload(d.id, { filename: 'big.png', contentType: 'image/png', data: big });
    assert.equal(ok.statusCode, 200, ok.body.slice(0, 300));
    assert.equal(lastEvidence(ok).size_bytes, 5 * MIB);
    const tooBig = Buffer.alloc(5 * MIB + 1, 0x41);
    PNG.copy(tooBig);
    const res = await upload(d.id, { filename: 'huge.png', contentType: 'image/png', data: tooBig });
    const error = assertErrorEnvelope(res, 413, 'invalid_request', 'invalid_request');
    assert.equal(error.param, 'file');

    const two = multipart({}, [
      { filename: 'a.png', contentType: 'image/png', data: PNG },
      { filename: 'b.png', contentType: 'image/png', data: PNG },
    ]);
    const twoRes = await h.request({
      method: 'POST',
      url: `/v1/disputes/${d.id}/evidence`,
      headers: two.headers,
      payload: two.payload,
    });
    assert.equal(assertErrorEnvelope(twoRes, 400, 'invalid_request', 'invalid_request').param, 'file');
    const noFile = await upload(d.id, null, { description: 'only words' });
    assert.equal(assertErrorEnvelope(noFile, 400, 'invalid_request', 'invalid_request').param, 'file');
    const wrongName = await upload(d.id, {
      name: 'photo',
      filename: 'a.png',
      contentType: 'image/png',
      data: PNG,
    });
    assert.equal(assertErrorEnvelope(wrongName, 400, 'invalid_request', 'invalid_request').param, 'photo');
    const extra = await upload(
      d.id,
      { filename: 'a.png', contentType: 'image/png', data: PNG },
      { kind: 'file' },
    );
    assert.equal(assertErrorEnvelope(extra, 400, 'invalid_request', 'invalid_request').param, 'kind');
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.equal((view.evidence as Json[]).length, 1);
  });

  it('multipart is refused on every other route (415)', async () => {
    const { id } = await paidTransaction(h);
    const body = multipart({ service_transaction_id: id, reason: 'other', description: 'x' });
    const res = await h.request({
      method: 'POST',
      url: '/v1/disputes',
      headers: body.headers,
      payload: body.payload,
    });
    assertErrorEnvelope(res, 415, 'invalid_request', 'invalid_request');
  });

  it('is idempotent for JSON and for files', async () => {
    const d = await newDispute();
    const headers = { 'idempotency-key': `ev-${d.id}` };
    const a = await addJson(d.id, { kind: 'text', content: 'once' }, undefined, headers);
    const b = await addJson(d.id, { kind: 'text', content: 'once' }, undefined, headers);
    assert.equal(a.statusCode, 200);
    assert.equal(b.statusCode, 200);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    const c = await addJson(d.id, { kind: 'text', content: 'twice' }, undefined, headers);
    assertErrorEnvelope(c, 409, 'conflict', 'conflict');
    const fileHeaders = { 'idempotency-key': `file-${d.id}` };
    const f1 = await upload(
      d.id,
      { filename: 'a.png', contentType: 'image/png', data: PNG },
      {},
      undefined,
      fileHeaders,
    );
    const f2 = await upload(
      d.id,
      { filename: 'a.png', contentType: 'image/png', data: PNG },
      {},
      undefined,
      fileHeaders,
    );
    assert.equal(f1.statusCode, 200);
    assert.equal(f2.headers['idempotent-replayed'], 'true');
    const f3 = await upload(
      d.id,
      { filename: 'a.png', contentType: 'image/png', data: GIF },
      {},
      undefined,
      fileHeaders,
    );
    assertErrorEnvelope(f3, 409, 'conflict', 'conflict');
    const view = json(await h.request({ method: 'GET', url: `/v1/disputes/${d.id}` }));
    assert.equal((view.evidence as Json[]).length, 2);
  });

  it('closes the window for the parties at evidence_due_by (409); the operator adds notes until resolved', async () => {
    const d = await newDispute();
    await advance(h, 7 * 24 * 3600 - 1);
    assert.equal((await addJson(d.id, { kind: 'text', content: 'just in time' })).statusCode, 200);
    await advance(h, 1);
    const late = await addJson(d.id, { kind: 'text', content: 'too late' });
    const error = assertErrorEnvelope(late, 409, 'conflict', 'conflict');
    assert.match(error.message, /evidence window ended/);
    const lateFile = await upload(d.id, { filename: 'a.png', contentType: 'image/png', data: PNG });
    assertErrorEnvelope(lateFile, 409, 'conflict', 'conflict');

    const note = await addJson(d.id, { kind: 'text', content: 'Called both parties.' }, h.operatorKey);
    assert.equal(note.statusCode, 200, note.body);
    assert.equal(lastEvidence(note).submitted_by, 'operator');
    const opFile = await upload(
      d.id,
      { filename: 'call.pdf', contentType: 'application/pdf', data: PDF },
      {},
      h.operatorKey,
    );
    assert.equal(opFile.statusCode, 200, opFile.body);
    assert.equal(lastEvidence(opFile).submitted_by, 'operator');

    const resolved = await h.request({
      method: 'POST',
      url: `/v1/disputes/${d.id}/resolve`,
      key: h.operatorKey,
      payload: { decision: 'seller' },
    });
    assert.equal(resolved.statusCode, 200, resolved.body);
    const afterResolve = await addJson(d.id, { kind: 'text', content: 'more' }, h.operatorKey);
    assert.match(assertErrorEnvelope(afterResolve, 409, 'conflict', 'conflict').message, /resolved/);
  });

  it("keeps another merchant's and another environment's keys out (404), and serves files to the operator", async () => {
    const verified = await h.newMerchant({ verified: true });
    const d = await newDispute(verified.test_key);
    const up = await upload(
      d.id,
      { filename: 'a.png', contentType: 'image/png', data: PNG },
      {},
      verified.test_key,
    );
    const fileUrl = String(lastEvidence(up).content);
    const other = await h.newMerchant();
    for (const key of [other.test_key, verified.live_key]) {
      assertErrorEnvelope(
        await h.request({ method: 'GET', url: fileUrl, key }),
        404,
        'not_found',
        'not_found',
      );
      assertErrorEnvelope(
        await addJson(d.id, { kind: 'text', content: 'x' }, key),
        404,
        'not_found',
        'not_found',
      );
      assertErrorEnvelope(
        await upload(d.id, { filename: 'a.png', contentType: 'image/png', data: PNG }, {}, key),
        404,
        'not_found',
        'not_found',
      );
    }
    const asOperator = await h.request({ method: 'GET', url: fileUrl, key: h.operatorKey });
    assert.equal(asOperator.statusCode, 200);
    assert.deepEqual(asOperator.rawPayload, PNG);
    // An evidence id of another dispute, or a text evidence, has no file here.
    const textEvidence = lastEvidence(
      await addJson(d.id, { kind: 'text', content: 'words' }, verified.test_key),
    );
    assertErrorEnvelope(
      await h.request({
        method: 'GET',
        url: `/v1/disputes/${d.id}/evidence/${textEvidence.id}/file`,
        key: verified.test_key,
      }),
      404,
      'not_found',
      'not_found',
    );
    const other2 = await newDispute(verified.test_key);
    const wrongDispute = fileUrl.replace(d.id, other2.id);
    assertErrorEnvelope(
      await h.request({ method: 'GET', url: wrongDispute, key: verified.test_key }),
      404,
      'not_found',
      'not_found',
    );
    // Reading a file needs disputes:read; adding evidence needs disputes:write.
    const writeOnly = await createKey(h.ctx, {
      merchantId: verified.merchant_id,
      env: 'test',
      scopes: SCOPES.filter((s) => s !== 'disputes:read'),
    });
    assertErrorEnvelope(
      await h.request({ method: 'GET', url: fileUrl, key: writeOnly.key }),
      403,
      'insufficient_permissions',
      'permission_denied',
    );
    const readOnly = await createKey(h.ctx, {
      merchantId: verified.merchant_id,
      env: 'test',
      scopes: ['disputes:read'],
    });
    assertErrorEnvelope(
      await addJson(d.id, { kind: 'text', content: 'x' }, readOnly.key),
      403,
      'insufficient_permissions',
      'permission_denied',
    );
    assertErrorEnvelope(
      await h.request({ method: 'GET', url: fileUrl, key: null }),
      401,
      'invalid_api_key',
      'authentication_failed',
    );
  });

  it('limits a dispute to 20 files', async () => {
    const d = await newDispute();
    for (let i = 0; i < 20; i++) {
      const res = await upload(d.id, { filename: `p${i}.png`, contentType: 'image/png', data: PNG });
      assert.equal(res.statusCode, 200, res.body);
    }
    const res = await upload(d.id, { filename: 'p20.png', contentType: 'image/png', data: PNG });
    assert.equal(assertErrorEnvelope(res, 400, 'invalid_request', 'invalid_request').param, 'file');
    assert.equal((await addJson(d.id, { kind: 'text', content: 'text still fits' })).statusCode, 200);
  });
});
