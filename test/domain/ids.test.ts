import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasPrefix, ID_PREFIXES, type IdKind, newId } from '../../src/domain/ids.ts';

const CROCKFORD = '[0-9ABCDEFGHJKMNPQRSTVWXYZ]';

describe('ids', () => {
  it('uses the prefixes resolutions 1 lists, and no two kinds share a prefix', () => {
    const listed = {
      transaction: 'txn',
      paymentLink: 'plink',
      dispute: 'dsp',
      evidence: 'evd',
      refund: 'rfd',
      payout: 'po',
      event: 'evt',
      webhookEndpoint: 'we',
      apiKey: 'key',
      merchant: 'mch',
      request: 'req',
    };
    for (const [kind, prefix] of Object.entries(listed)) {
      assert.equal(ID_PREFIXES[kind as IdKind], prefix, kind);
    }
    const prefixes = Object.values(ID_PREFIXES);
    assert.equal(new Set(prefixes).size, prefixes.length);
    for (const prefix of prefixes) assert.match(prefix, /^[a-z]+$/);
  });

  for (const kind of Object.keys(ID_PREFIXES) as IdKind[]) {
    it(`makes ${kind} ids as the prefix, an underscore and 26 Crockford base32 characters`, () => {
      const id = newId(kind);
      assert.match(id, new RegExp(`^${ID_PREFIXES[kind]}_${CROCKFORD}{26}$`));
      assert.equal(hasPrefix(id, kind), true);
    });
  }

  it('tells a prefix apart from a longer one that starts the same way', () => {
    assert.equal(hasPrefix(newId('payout'), 'payout'), true);
    assert.equal(hasPrefix('pox_01', 'payout'), false);
    assert.equal(hasPrefix(newId('paymentLink'), 'payout'), false);
  });

  it('sorts ids as plain strings in the order of their creation time', () => {
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    const times = [0, 1, 2, 31, 32, 1000, 60_000, 86_400_000, 365 * 86_400_000, 40 * 365 * 86_400_000];
    const ids = times.map((offset) => newId('transaction', start + offset));
    assert.deepEqual([...ids].sort(), ids);
    // Also across the whole 48-bit range, not only near today.
    const extremes = [0, 1, 2 ** 32, Date.now(), 2 ** 48 - 1].map((ms) => newId('event', ms));
    assert.deepEqual([...extremes].sort(), extremes);
  });

  it('encodes the creation time in the first ten characters', () => {
    const a = newId('transaction', 1_700_000_000_000);
    const b = newId('transaction', 1_700_000_000_000);
    assert.equal(a.slice(4, 14), b.slice(4, 14));
    assert.notEqual(a, b);
  });

  it('cannot be guessed: ids made in the same millisecond are all different', () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('transaction', now)));
    assert.equal(ids.size, 10_000);
  });
});
