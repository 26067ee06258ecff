import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, requestFingerprint } from '../../src/domain/canonical-json.ts';

/** The same value with every object's keys in a new order (recursively). */
function reorder(value: unknown, pick: (n: number) => number): unknown {
  if (Array.isArray(value)) return value.map((v) => reorder(v, pick));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    const shuffled: Array<[string, unknown]> = [];
    while (entries.length > 0) {
      const [entry] = entries.splice(pick(entries.length), 1);
      if (entry) shuffled.push([entry[0], reorder(entry[1], pick)]);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of shuffled) Object.defineProperty(out, k, { value: v, enumerable: true });
    return out;
  }
  return value;
}

describe('canonicalJson', () => {
  it('writes object keys in sorted order at every depth', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }),
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it('keeps array order, because order in an array is meaning', () => {
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  });

  it('does not depend on key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(), { minLength: 1 }), (value, seeds) => {
        let i = 0;
        const pick = (n: number) => (seeds[i++ % seeds.length] ?? 0) % n;
        return canonicalJson(reorder(value, pick)) === canonicalJson(value);
      }),
      { numRuns: 300 },
    );
  });

  it('is valid JSON that parses back to the same value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assert.deepEqual(JSON.parse(canonicalJson(value)), JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart values that differ', () => {
    assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: '1' }));
    assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: 1, b: null }));
    assert.notEqual(canonicalJson({ 'a,"b":1': 1 }), canonicalJson({ a: 1, b: 1 }));
  });
});

describe('requestFingerprint', () => {
  it('ignores key order and the idempotency_key field, and nothing else', () => {
    const base = requestFingerprint({ amount: 10, title: 'Book', metadata: { a: '1', b: '2' } });
    assert.equal(requestFingerprint({ metadata: { b: '2', a: '1' }, title: 'Book', amount: 10 }), base);
    assert.equal(
      requestFingerprint({ amount: 10, title: 'Book', metadata: { a: '1', b: '2' }, idempotency_key: 'k' }),
      base,
    );
    assert.notEqual(requestFingerprint({ amount: 10.5, title: 'Book', metadata: { a: '1', b: '2' } }), base);
    assert.notEqual(requestFingerprint({ amount: 10, title: 'Book', metadata: { a: '1' } }), base);
    assert.match(base, /^[0-9a-f]{64}$/);
  });
});
