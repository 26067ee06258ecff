import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CURRENCIES,
  CURRENCY_EXPONENTS,
  type Currency,
  isCurrency,
  MAX_AMOUNT_MAJOR,
  toMajorUnits,
  toMinorUnits,
} from '../../src/domain/money.ts';

function minor(amount: number, currency: Currency): bigint {
  const parsed = toMinorUnits(amount, currency);
  assert.ok(parsed.ok, `${amount} ${currency} should parse: ${parsed.ok ? '' : parsed.reason}`);
  return parsed.minor;
}

function reason(amount: number, currency: Currency): string {
  const parsed = toMinorUnits(amount, currency);
  assert.ok(!parsed.ok, `${amount} ${currency} should be refused`);
  return parsed.reason;
}

describe('money', () => {
  it('knows exactly the twelve supported currencies with their ISO 4217 exponents', () => {
    assert.deepEqual(CURRENCY_EXPONENTS, {
      KES: 2,
      UGX: 0,
      TZS: 2,
      RWF: 0,
      GHS: 2,
      NGN: 2,
      ZAR: 2,
      XOF: 0,
      XAF: 0,
      USD: 2,
      EUR: 2,
      GBP: 2,
    });
    assert.equal(isCurrency('KES'), true);
    assert.equal(isCurrency('kes'), false);
    assert.equal(isCurrency('XYZ'), false);
    assert.equal(isCurrency('toString'), false);
  });

  for (const currency of CURRENCIES) {
    const exponent = CURRENCY_EXPONENTS[currency];
    it(`converts ${currency} (exponent ${exponent}) to minor units and back for sample amounts`, () => {
      const samples: Array<[number, bigint]> =
        exponent === 2
          ? [
              [1, 100n],
              [0.01, 1n],
              [0.1, 10n],
              [1500.5, 150050n],
              [1500.1, 150010n],
              [19.99, 1999n],
              [999_999_999.99, 99_999_999_999n],
              [MAX_AMOUNT_MAJOR, 100_000_000_000n],
            ]
          : [
              [1, 1n],
              [1500, 1500n],
              [MAX_AMOUNT_MAJOR, 1_000_000_000n],
            ];
      for (const [major, expected] of samples) {
        assert.equal(minor(major, currency), expected, `${major} ${currency}`);
        assert.equal(toMajorUnits(expected, currency), major, `${expected} minor ${currency}`);
      }
    });

    it(`round-trips every ${currency} minor amount in range (property)`, () => {
      const maxMinor = BigInt(MAX_AMOUNT_MAJOR) * 10n ** BigInt(exponent);
      fc.assert(
        fc.property(fc.bigInt({ min: 1n, max: maxMinor }), (m) => {
          const back = toMinorUnits(toMajorUnits(m, currency), currency);
          return back.ok && back.minor === m;
        }),
        { numRuns: 500 },
      );
    });
  }

  it('refuses amounts that are zero, negative, not finite or above the maximum', () => {
    for (const amount of [0, -0, -1, -0.01, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(reason(amount, 'KES'), 'must be greater than 0', String(amount));
    }
    assert.equal(reason(MAX_AMOUNT_MAJOR + 1, 'KES'), `must be at most ${MAX_AMOUNT_MAJOR}`);
    assert.equal(reason(MAX_AMOUNT_MAJOR + 0.01, 'KES'), `must be at most ${MAX_AMOUNT_MAJOR}`);
  });

  it('refuses more decimals than the currency allows, including float artefacts', () => {
    assert.equal(reason(1.234, 'KES'), 'has more than 2 decimal places for KES');
    assert.equal(reason(0.1 + 0.2, 'USD'), 'has more than 2 decimal places for USD');
    assert.equal(reason(1e-7, 'KES'), 'has more than 2 decimal places for KES');
    assert.equal(reason(5e-324, 'KES'), 'has more than 2 decimal places for KES');
    assert.equal(reason(1.5, 'UGX'), 'must be a whole number for UGX');
    assert.equal(reason(0.5, 'XOF'), 'must be a whole number for XOF');
  });

  it('gives every decimal amount with at most two places exactly, never through float multiplication', () => {
    // 1.15 * 100 is 114.99999999999999 in floating point; the conversion must still be 115.
    assert.equal(minor(1.15, 'KES'), 115n);
    assert.equal(minor(4.35, 'KES'), 435n);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999_999_999 }), (cents) => {
        const major = Number(`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`);
        const parsed = toMinorUnits(major, 'KES');
        return parsed.ok && parsed.minor === BigInt(cents);
      }),
      { numRuns: 500 },
    );
  });

  it('renders negative minor amounts as negative major units', () => {
    assert.equal(toMajorUnits(-150050n, 'KES'), -1500.5);
    assert.equal(toMajorUnits(-7n, 'KES'), -0.07);
    assert.equal(toMajorUnits(0n, 'KES'), 0);
    assert.equal(toMajorUnits(-5n, 'UGX'), -5);
  });
});
