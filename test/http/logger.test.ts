import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { createLogger, redactTokens } from '../../src/http/logger.ts';

describe('request logs', () => {
  it('replace checkout and buyer tokens in a URL, and nothing else', () => {
    assert.equal(redactTokens('/pay/abcDEF_-123/status?x=1'), '/pay/[token]/status?x=1');
    assert.equal(redactTokens('/buyer/abc/confirm'), '/buyer/[token]/confirm');
    assert.equal(redactTokens('/v1/transactions/txn_1'), '/v1/transactions/txn_1');
  });

  it('carry no link token when Fastify logs a request', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('info', sink);
    const app = Fastify({ loggerInstance: logger });
    app.get('/pay/:token', async () => 'page');
    await app.inject({ url: '/pay/SECRET-TOKEN-123' });
    await app.close();
    const text = lines.join('');
    assert.match(text, /"url":"\/pay\/\[token\]"/);
    assert.doesNotMatch(text, /SECRET-TOKEN-123/);
  });
});
