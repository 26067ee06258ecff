import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';
import { commonAuthTests } from '../helpers/common-auth.ts';
import { json } from '../helpers/harness.ts';
import { assertLedgerSound } from '../helpers/ledger-invariants.ts';
import { suiteHarness } from '../helpers/suite-harness.ts';
import { type Body, client } from './support.ts';

const h = suiteHarness();
const harness = () => h;
const c = client(harness);

const FIGURES = [
  'held',
  'approved_for_release',
  'in_transit',
  'paid_out',
  'refund_pending',
  'refunded',
  'merchant_balance',
] as const;
type Figures = Partial<Record<(typeof FIGURES)[number], number>>;

async function balanceOf(key: string): Promise<{ object: string; livemode: boolean; currencies: Body[] }> {
  const res = await c.get('/v1/balance', key);
  assert.equal(res.statusCode, 200, res.body);
  return json(res);
}

/** Every figure of one currency, in major units (absent = 0) and minor units (× 10^exponent). */
async function expectBalance(key: string, currency: string, expected: Figures, exponent = 2): Promise<void> {
  const entry = (await balanceOf(key)).currencies.find((b) => b.currency === currency);
  assert.ok(entry, `no ${currency} entry`);
  const want: Body = { currency };
  for (const figure of FIGURES) {
    const major = expected[figure] ?? 0;
    want[figure] = major;
    want[`${figure}_minor`] = Math.round(major * 10 ** exponent);
  }
  assert.deepEqual(entry, want);
}

describe('GET /v1/balance', () => {
  it('a new merchant sees its default currency with every figure at zero', async () => {
    const m = await h.newMerchant();
    assert.deepEqual(await balanceOf(m.test_key), {
      object: 'balance',
      livemode: false,
      currencies: [
        {
          currency: 'KES',
          held: 0,
          held_minor: 0,
          approved_for_release: 0,
          approved_for_release_minor: 0,
          in_transit: 0,
          in_transit_minor: 0,
          paid_out: 0,
          paid_out_minor: 0,
          refund_pending: 0,
          refund_pending_minor: 0,
          refunded: 0,
          refunded_minor: 0,
          merchant_balance: 0,
          merchant_balance_minor: 0,
        },
      ],
    });
  });

  it('follows the money: held, approved, in transit, paid out, refunds pending and paid, the merchant’s balance', async () => {
    const m: CreatedMerchant = await h.newMerchant();
    const key = m.test_key;
    const settings = { method: 'mobile_money', phone: '+254711000000', schedule: 'instant' };
    assert.equal((await c.post('/v1/payout_settings', settings, key)).statusCode, 200);

    const held = await c.paid({ key, amount: 1000 });
    await expectBalance(key, 'KES', { held: 1000 });

    const sold = await c.paid({ key, amount: 500.25 });
    await c.post(`/v1/transactions/${sold}/confirm`, {}, key);
    await expectBalance(key, 'KES', { held: 1000, approved_for_release: 500.25 });

    // The payout run has sent the payout; the rail has not answered yet.
    await runDueJobs(h.ctx, { merchantId: m.merchant_id, livemode: false, kinds: ['payout_run'] });
    await expectBalance(key, 'KES', { held: 1000, in_transit: 500.25 });
    await c.advance(1, key);
    await expectBalance(key, 'KES', { held: 1000, paid_out: 500.25 });

    assert.equal((await c.refund({ service_transaction_id: held, amount: 100 }, key)).statusCode, 201);
    await expectBalance(key, 'KES', { held: 900, paid_out: 500.25, refund_pending: 100 });
    await c.advance(1, key);
    await expectBalance(key, 'KES', { held: 900, paid_out: 500.25, refunded: 100 });

    // After release the refund comes from the merchant's balance: negative, the merchant owes it.
    assert.equal((await c.refund({ service_transaction_id: sold, amount: 200.05 }, key)).statusCode, 201);
    await expectBalance(key, 'KES', {
      held: 900,
      paid_out: 500.25,
      refund_pending: 200.05,
      refunded: 100,
      merchant_balance: -200.05,
    });
    await c.advance(1, key);
    await expectBalance(key, 'KES', {
      held: 900,
      paid_out: 500.25,
      refunded: 300.05,
      merchant_balance: -200.05,
    });

    // Another currency gets its own entry, in its own units; entries are sorted by code.
    await c.paid({ key, amount: 5000, body: { currency: 'UGX' } });
    assert.deepEqual(
      (await balanceOf(key)).currencies.map((b) => b.currency),
      ['KES', 'UGX'],
    );
    await expectBalance(key, 'UGX', { held: 5000 }, 0);
    await assertLedgerSound(h.ctx.db, m.merchant_id, 'the balance walk');
  });

  it('each environment sees its own money', async () => {
    const m = await h.newMerchant({ verified: true });
    await c.paid({ key: m.test_key, amount: 70 });
    await expectBalance(m.test_key, 'KES', { held: 70 });
    const live = await balanceOf(m.live_key);
    assert.equal(live.livemode, true);
    await expectBalance(m.live_key, 'KES', {});
    // And another merchant sees nothing of it.
    await expectBalance((await h.newMerchant()).test_key, 'KES', {});
  });
});

commonAuthTests(harness, { method: 'GET', url: '/v1/balance', scope: 'payouts:read' });
