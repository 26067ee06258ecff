import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/domain/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import { type CreatedMerchant, createMerchant } from '../../src/operations/manage-merchants.ts';
import { type CliResult, freshDatabase, runCli, type TestDatabase } from '../helpers/spawn.ts';

/**
 * `safehold ledger verify` against a database with real money in it: transactions paid, refunded,
 * released and paid out through the API (in this process), then the CLI in a child process while
 * this one has closed the database. Tampering with the books in SQL must make it exit 1 and say
 * what is wrong.
 */

interface Report {
  sound: boolean;
  transactions: number;
  journal_rows: number;
  problems: { check: string; subject: string; message: string }[];
}

function exited(result: CliResult, code: number): void {
  assert.equal(result.code, code, `expected exit ${code}; stdout: ${result.stdout} stderr: ${result.stderr}`);
}

describe('safehold ledger verify', () => {
  let db: TestDatabase;
  let merchant: CreatedMerchant;
  let other: CreatedMerchant;
  const ids: string[] = [];

  before(async () => {
    db = await freshDatabase();
    const ctx = await openContext(
      { ...loadConfig(db.env as NodeJS.ProcessEnv), secret: 'ledger-verify-test' },
      { clock: new ManualClock(new Date()) },
    );
    let app: FastifyInstance | undefined;
    try {
      app = await buildApp({
        ctx,
        rateLimiter: createRateLimiter(),
        defaultRateLimitPerMinute: 1000,
        logger: false,
      });
      merchant = await createMerchant(ctx, { name: 'Books', email: 'books@example.com' });
      other = await createMerchant(ctx, { name: 'Bystander', email: 'by@example.com' });
      const server = app;
      const post = async (url: string, payload: Record<string, unknown> = {}) => {
        const res = await server.inject({
          method: 'POST',
          url,
          payload,
          headers: { authorization: `Bearer ${merchant.test_key}` },
        });
        assert.ok(res.statusCode < 300, `${url}: ${res.body}`);
        return res.json() as Record<string, unknown>;
      };
      await post('/v1/payout_settings', {
        method: 'mobile_money',
        phone: '+254711000000',
        schedule: 'instant',
      });
      for (const amount of [1000, 2500, 400]) {
        const id = String((await post('/v1/transactions', { amount, title: 'Lamp' })).service_transaction_id);
        await post(`/v1/test_helpers/transactions/${id}/pay`, {
          method: 'card',
          card_number: '4242424242424242',
        });
        ids.push(id);
      }
      const [refunded, paidOut, held] = ids as [string, string, string];
      await post('/v1/refunds', { service_transaction_id: refunded, amount: 250 });
      await post(`/v1/transactions/${paidOut}/confirm`);
      await post('/v1/test_helpers/clock/advance', { seconds: 1 });
      await post('/v1/refunds', { service_transaction_id: paidOut, amount: 100 });
      await post('/v1/refunds', { service_transaction_id: held, amount: 40 }); // still pending
    } finally {
      await app?.close();
      await ctx.db.close();
    }
  });
  after(() => db.drop());

  it('passes a sound book: exit 0 and the counts of what it checked', async () => {
    const result = await runCli(['ledger', 'verify'], db.env);
    exited(result, 0);
    const match = /^ledger sound: (\d+) transactions, (\d+) journal rows checked\n$/.exec(result.stdout);
    assert.ok(match, result.stdout);
    assert.equal(match[1], '3');
    // capture ×3; refund 250 and its refund_paid; approve, payout, payout_paid; refund_from_balance
    // 100 and refund 40, both still pending.
    assert.equal(match[2], '10');

    const json = await runCli(['ledger', 'verify', '--json'], db.env);
    exited(json, 0);
    assert.deepEqual(JSON.parse(json.stdout), {
      sound: true,
      transactions: 3,
      journal_rows: 10,
      problems: [],
    });
  });

  it('reports every difference after the books are tampered with, and exits 1', async () => {
    const open = await db.open();
    try {
      // A transaction that claims more refunded than its journal and refunds show.
      await open.query(
        'UPDATE transactions SET amount_refunded_minor = amount_refunded_minor + 500 WHERE id = $1',
        [ids[0]],
      );
      // A journal row of no transaction that moves payable funds into the payout clearing account:
      // each row balances, so only the per-book checks can see it.
      await open.query(
        `INSERT INTO ledger_entries (id, merchant_id, livemode, currency, transaction_id, kind, debit_account,
            credit_account, amount_minor, created_at)
         VALUES ('le_tampered', $1, false, 'KES', NULL, 'payout', 'seller_payable', 'payout_clearing', 700, now())`,
        [merchant.merchant_id],
      );
    } finally {
      await open.close();
    }

    const result = await runCli(['ledger', 'verify'], db.env);
    exited(result, 1);
    const [summary, ...lines] = result.stdout.trimEnd().split('\n');
    assert.equal(summary, 'ledger unsound: 6 problems; 3 transactions, 11 journal rows checked');
    const book = `${merchant.merchant_id}/test/KES`;
    const expected = [
      `  held ${ids[0]}: journal holds 75000 (captured 100000 - approved 0 - refunded from escrow 25000) but the reserved row holds 74500`,
      `  refunded ${ids[0]}: amount_refunded_minor 25500, journal refunded 25000`,
      `  refund_rows ${ids[0]}: amount_refunded_minor 25500, but its refunds that did not fail total 25000`,
      `  escrow_balance ${book}: escrow_held balance -111000, but the transactions hold 110500`,
      `  seller_payable ${book}: seller_payable balance 700, but the transactions have approved and not batched 0`,
      `  payout_clearing ${book}: payout_clearing balance -700, but the transactions have in payouts not yet paid 0`,
    ];
    assert.deepEqual(lines, expected);

    const json = await runCli(['ledger', 'verify', '--json'], db.env);
    exited(json, 1);
    const report = JSON.parse(json.stdout) as Report;
    assert.equal(report.sound, false);
    assert.equal(report.problems.length, lines.length);
    assert.deepEqual([...new Set(report.problems.map((p) => p.check))].sort(), [
      'escrow_balance',
      'held',
      'payout_clearing',
      'refund_rows',
      'refunded',
      'seller_payable',
    ]);
  });

  it('--merchant checks one merchant’s books only; an unknown merchant exits 1', async () => {
    const theirs = await runCli(['ledger', 'verify', '--merchant', other.merchant_id], db.env);
    exited(theirs, 0);
    assert.equal(
      theirs.stdout,
      `ledger sound: 0 transactions, 0 journal rows checked of merchant ${other.merchant_id}\n`,
    );
    const mine = await runCli(['ledger', 'verify', '--merchant', merchant.merchant_id], db.env);
    exited(mine, 1);
    assert.match(mine.stdout, new RegExp(`^ledger unsound: .* of merchant ${merchant.merchant_id}\n`));
    const unknown = await runCli(['ledger', 'verify', '--merchant', 'mch_nope'], db.env);
    exited(unknown, 1);
    assert.equal(unknown.stderr.trim(), "safehold: No such merchant: 'mch_nope'.");
  });

  it('refuses extra arguments with the usage text (exit 2)', async () => {
    const result = await runCli(['ledger', 'verify', 'now'], db.env);
    exited(result, 2);
    assert.match(result.stderr, /ledger verify \[--merchant ID\] \[--json\]/);
  });
});
