import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CliResult, cliJson, freshDatabase, runCli, type TestDatabase } from '../helpers/spawn.ts';

/** `safehold merchant payout-method`, as an operator runs it, on a fresh database. */
describe('safehold merchant payout-method', () => {
  let db: TestDatabase;
  let merchantId: string;
  before(async () => {
    db = await freshDatabase();
    const created = await cliJson<{ merchant_id: string }>(
      ['merchant', 'create', '--name', 'Payout CLI', '--email', 'cli@example.com'],
      db.env,
    );
    merchantId = created.merchant_id;
  });
  after(() => db.drop());

  const payoutMethod = (...args: string[]) => ['merchant', 'payout-method', merchantId, ...args];
  const exits = (result: CliResult, code: number) =>
    assert.equal(result.code, code, `stdout: ${result.stdout} stderr: ${result.stderr}`);

  it('sets a live mobile-money method and prints it masked', async () => {
    const printed = await cliJson(
      payoutMethod('--env', 'live', '--phone', '+254712345678', '--schedule', 'instant'),
      db.env,
    );
    assert.deepEqual(
      { ...printed, updated_at: typeof printed.updated_at },
      {
        object: 'payout_settings',
        method: 'mobile_money',
        destination: '****5678',
        bank_code: null,
        schedule: 'instant',
        simulated: false,
        livemode: true,
        updated_at: 'string',
      },
    );
  });

  it('sets a test bank account (daily by default), leaving live as it was', async () => {
    const result = await runCli(
      payoutMethod('--env', 'test', '--bank-code', '01', '--account-number', '99887766'),
      db.env,
    );
    exits(result, 0);
    assert.match(result.stdout, /destination: \*\*\*\*7766/);
    assert.match(result.stdout, /schedule: daily/);
    const handle = await db.open();
    try {
      const { rows } = await handle.query<{
        livemode: boolean;
        method: string;
        account_number: string | null;
      }>(
        'SELECT livemode, method, account_number FROM payout_settings WHERE merchant_id = $1 ORDER BY livemode',
        [merchantId],
      );
      assert.deepEqual(rows, [
        { livemode: false, method: 'bank_transfer', account_number: '99887766' },
        { livemode: true, method: 'mobile_money', account_number: null },
      ]);
    } finally {
      await handle.close();
    }
  });

  it('refuses bad input with the reason, and usage errors with exit 2', async () => {
    const badPhone = await runCli(payoutMethod('--env', 'test', '--phone', '0712'), db.env);
    exits(badPhone, 1);
    assert.match(badPhone.stderr, /phone must be an E\.164 number/);
    const halfBank = await runCli(payoutMethod('--env', 'test', '--bank-code', '01'), db.env);
    exits(halfBank, 1);
    assert.match(halfBank.stderr, /account_number is required/);
    const unknown = await runCli(
      ['merchant', 'payout-method', 'mch_nope', '--env', 'test', '--phone', '+254712345678'],
      db.env,
    );
    exits(unknown, 1);
    assert.match(unknown.stderr, /No such merchant: 'mch_nope'/);
    const neither = await runCli(payoutMethod('--env', 'test'), db.env);
    exits(neither, 2);
    assert.match(neither.stderr, /give --phone, or --bank-code and --account-number/);
    const schedule = await runCli(
      payoutMethod('--env', 'live', '--phone', '+254712345678', '--schedule', 'weekly'),
      db.env,
    );
    exits(schedule, 2);
  });
});
