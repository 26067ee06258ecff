import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadMigrations } from '../../src/store/migrate.ts';
import {
  type CliResult,
  cliJson,
  freshDatabase,
  type RunningServer,
  runCli,
  startServer,
  type TestDatabase,
} from '../helpers/spawn.ts';

/**
 * The CLI as an operator uses it, against a fresh PGlite folder (or, when DATABASE_URL is set, a
 * fresh PostgreSQL schema through DATABASE_SCHEMA). The keys it prints are then proven over TCP
 * against the real server started on the same database.
 */

interface CreatedMerchant {
  merchant_id: string;
  test_key: string;
  test_key_id: string;
  live_key: string;
  live_key_id: string;
}

const HOUR = 60 * 60 * 1000;

function failed(result: CliResult, code: number): void {
  assert.equal(result.code, code, `expected exit ${code}; stdout: ${result.stdout} stderr: ${result.stderr}`);
}

describe('the safehold CLI', () => {
  let db: TestDatabase;
  let unverified: CreatedMerchant;
  let ugxVerified: CreatedMerchant;
  let toVerify: CreatedMerchant;
  let readKey: { key_id: string; key: string };
  let rotated: { key_id: string; key: string; previous_key_expires_at: string };
  let operatorKey: string;

  before(async () => {
    db = await freshDatabase();
  });
  after(() => db.drop());

  it('migrate applies every migration to an empty database', async () => {
    const result = await runCli(['migrate'], db.env);
    failed(result, 0);
    assert.equal(
      result.stdout.trim(),
      `applied: ${loadMigrations()
        .map((m) => m.name)
        .join(', ')}`,
    );
  });

  it('merchant create --json prints exactly the merchant id and its test and live keys', async () => {
    unverified = await cliJson<CreatedMerchant>(
      ['merchant', 'create', '--name', 'Duka One', '--email', 'one@example.com'],
      db.env,
    );
    assert.deepEqual(Object.keys(unverified).sort(), [
      'live_key',
      'live_key_id',
      'merchant_id',
      'test_key',
      'test_key_id',
    ]);
    assert.match(unverified.merchant_id, /^mch_[0-9A-Z]{26}$/);
    assert.match(unverified.test_key, /^sk_test_\w+$/);
    assert.match(unverified.live_key, /^sk_live_\w+$/);
    assert.match(unverified.test_key_id, /^key_/);
    assert.notEqual(unverified.test_key_id, unverified.live_key_id);
  });

  it('merchant create takes --default-currency and --verified', async () => {
    ugxVerified = await cliJson<CreatedMerchant>(
      [
        'merchant',
        'create',
        '--name',
        'Kampala Shop',
        '--email',
        'ug@example.com',
        '--default-currency',
        'UGX',
        '--verified',
      ],
      db.env,
    );
    toVerify = await cliJson<CreatedMerchant>(
      ['merchant', 'create', '--name', 'Later', '--email', 'later@example.com'],
      db.env,
    );
    assert.notEqual(ugxVerified.merchant_id, toVerify.merchant_id);
  });

  it('key create --scopes prints exactly the key id and the key', async () => {
    readKey = await cliJson(
      [
        'key',
        'create',
        '--merchant',
        unverified.merchant_id,
        '--env',
        'test',
        '--scopes',
        'transactions:read',
      ],
      db.env,
    );
    assert.deepEqual(Object.keys(readKey).sort(), ['key', 'key_id']);
    assert.match(readKey.key, /^sk_test_\w+$/);
  });

  it('key rotate prints the new key and an expiry of the old one 24 hours ahead', async () => {
    const before = Date.now();
    rotated = await cliJson(['key', 'rotate', unverified.test_key_id], db.env);
    const after = Date.now();
    assert.deepEqual(Object.keys(rotated).sort(), ['key', 'key_id', 'previous_key_expires_at']);
    assert.match(rotated.key, /^sk_test_\w+$/);
    const expires = Date.parse(rotated.previous_key_expires_at);
    assert.ok(expires >= before + 24 * HOUR && expires <= after + 24 * HOUR, rotated.previous_key_expires_at);
  });

  it('key revoke, merchant verify and merchant rate-limit report what they did', async () => {
    const revoke = await runCli(['key', 'revoke', ugxVerified.test_key_id], db.env);
    failed(revoke, 0);
    assert.match(revoke.stdout, new RegExp(`key ${ugxVerified.test_key_id} revoked`));
    const verify = await runCli(['merchant', 'verify', toVerify.merchant_id], db.env);
    failed(verify, 0);
    assert.match(verify.stdout, /is verified/);
    const limit = await runCli(['merchant', 'rate-limit', unverified.merchant_id, '7'], db.env);
    failed(limit, 0);
    assert.match(limit.stdout, /7 requests per minute/);
  });

  it('operator create --json prints exactly an sk_op_ key', async () => {
    const printed = await cliJson<{ operator_key: string }>(['operator', 'create'], db.env);
    assert.deepEqual(Object.keys(printed), ['operator_key']);
    assert.match(printed.operator_key, /^sk_op_\w+$/);
    operatorKey = printed.operator_key;
  });

  it('an unknown merchant or key exits 1 with a clear message and no usage text', async () => {
    const verify = await runCli(['merchant', 'verify', 'mch_nope'], db.env);
    failed(verify, 1);
    assert.equal(verify.stderr.trim(), "safehold: No such merchant: 'mch_nope'.");
    const key = await runCli(['key', 'create', '--merchant', 'mch_nope', '--env', 'live'], db.env);
    failed(key, 1);
    assert.match(key.stderr, /No such merchant: 'mch_nope'/);
    const rotate = await runCli(['key', 'rotate', 'key_nope'], db.env);
    failed(rotate, 1);
    assert.match(rotate.stderr, /No such key: 'key_nope'/);
    assert.doesNotMatch(verify.stderr + key.stderr + rotate.stderr, /Usage:/);
  });

  it('migrate on an up-to-date database applies nothing', async () => {
    const result = await runCli(['migrate'], db.env);
    failed(result, 0);
    assert.equal(result.stdout.trim(), 'database is up to date');
  });

  describe('the keys it printed, used over TCP against the server on the same database', () => {
    let server: RunningServer;
    const call = (key: string, method: 'GET' | 'POST', body?: unknown) =>
      fetch(`${server.url}/v1/transactions`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const sale = (ref: string) => ({ amount: 2500, title: 'Sofa', merchant_reference: ref });

    before(async () => {
      server = await startServer(db.env);
    });
    after(async () => {
      await server.stop();
    });

    it('starts without a first-start banner, since merchants exist', () => {
      assert.equal(server.demo, undefined);
      assert.doesNotMatch(server.stdout(), /sk_(test|live|op)_/);
    });

    it('the rotated key and, during its 24 hours of grace, the old key both create transactions', async () => {
      const fresh = await call(rotated.key, 'POST', sale('rotated-new'));
      assert.equal(fresh.status, 201);
      const old = await call(unverified.test_key, 'POST', sale('rotated-old'));
      assert.equal(old.status, 201);
    });

    it('merchant rate-limit sets the limit the keys of that merchant get', async () => {
      const res = await call(rotated.key, 'GET');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-limit'), '7');
    });

    it('a key created with transactions:read may list but not create', async () => {
      assert.equal((await call(readKey.key, 'GET')).status, 200);
      const refused = await call(readKey.key, 'POST', sale('read-only'));
      assert.equal(refused.status, 403);
      assert.equal(
        ((await refused.json()) as { error: { code: string } }).error.code,
        'insufficient_permissions',
      );
    });

    it('a revoked key is refused with 401', async () => {
      const res = await call(ugxVerified.test_key, 'GET');
      assert.equal(res.status, 401);
    });

    it('--verified and --default-currency give a live key that creates UGX transactions', async () => {
      const res = await call(ugxVerified.live_key, 'POST', { amount: 50000, title: 'Matooke' });
      assert.equal(res.status, 201);
      const t = (await res.json()) as { currency: string; livemode: boolean; amount_minor: number };
      assert.equal(t.currency, 'UGX');
      assert.equal(t.livemode, true);
      assert.equal(t.amount_minor, 50000);
    });

    it('live keys are refused before merchant verify and accepted after it', async () => {
      const refused = await call(unverified.live_key, 'POST', sale('live-unverified'));
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'permission_denied');
      assert.equal((await call(toVerify.live_key, 'POST', sale('live-verified'))).status, 201);
    });

    it('the operator key authenticates but may not act for a merchant', async () => {
      const res = await call(operatorKey, 'GET');
      assert.equal(res.status, 403);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'permission_denied');
    });
  });
});

describe('CLI usage errors (checked before the database is opened)', { concurrency: 4 }, () => {
  // No database variables: nothing may be opened, so these need no folder and run at once.
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['merchant', 'delete', 'mch_x'], /unknown command 'merchant delete mch_x'/],
    ['a missing --email', ['merchant', 'create', '--name', 'N'], /missing --email/],
    ['a missing --merchant', ['key', 'create', '--env', 'test'], /missing --merchant/],
    [
      'an --env other than test or live',
      ['key', 'create', '--merchant', 'mch_x', '--env', 'prod'],
      /--env must be test or live/,
    ],
    [
      'an unknown scope',
      ['key', 'create', '--merchant', 'mch_x', '--env', 'test', '--scopes', 'everything'],
      /unknown scope\(s\): everything/,
    ],
    ['an unknown option', ['operator', 'create', '--jsonn'], /Unknown option '--jsonn'/],
    ['a missing KEY_ID', ['key', 'rotate'], /missing KEY_ID/],
    ['a rate limit that is not a number', ['merchant', 'rate-limit', 'mch_x', 'lots'], /whole number/],
  ];

  for (const [what, args, message] of cases) {
    it(`${what} exits 2 with the usage text`, async () => {
      // A DATA_DIR that cannot be created proves the database is never touched.
      const result = await runCli(args, { DATA_DIR: '/proc/safehold-must-not-open' });
      failed(result, 2);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /Usage: safehold <command>/);
      assert.equal(result.stdout, '');
    });
  }

  it('--help prints the usage and exits 0', async () => {
    const result = await runCli(['--help'], {});
    failed(result, 0);
    assert.match(result.stdout, /^Usage: safehold <command>/);
    assert.match(result.stdout, /merchant create --name N --email E/);
  });
});
