import { parseArgs } from 'node:util';
import { openContext } from './bootstrap.ts';
import { type Config, loadConfig, type Role } from './config.ts';
import { isScope, type Scope } from './domain/api-keys.ts';
import { notFound } from './domain/errors.ts';
import type { ServiceContext } from './operations/context.ts';
import { createKey, createOperatorKey, revokeKey, rotateKey } from './operations/manage-keys.ts';
import {
  createMerchant,
  setMerchantRateLimit,
  setMerchantVerification,
} from './operations/manage-merchants.ts';
import { setPayoutSettingsForMerchant } from './operations/payout-settings.ts';
import { describeLedgerReport, verifyLedgerReport } from './operations/verify-ledger.ts';
import { serve } from './server.ts';
import { findMerchant } from './store/merchants.ts';
import { migrate } from './store/migrate.ts';
import { openDatabase } from './store/open.ts';

const USAGE = `Usage: safehold <command>

  serve [--role all|api|worker]           run the API and the worker (what npm start runs);
                                          --role api or worker runs one of them
  migrate                                 apply database migrations
  merchant create --name N --email E [--default-currency KES] [--verified] [--json]
  merchant verify MERCHANT_ID             mark business verification complete (enables live keys)
  merchant rate-limit MERCHANT_ID N|default   requests per minute for the merchant's keys
  merchant payout-method MERCHANT_ID --env test|live (--phone P | --bank-code B --account-number A)
                         [--schedule instant|daily] [--json]   where and when the merchant is paid
  key create --merchant ID --env test|live [--scopes a,b] [--json]
  key rotate KEY_ID [--json]              new key; the old one stays valid for 24 hours
  key revoke KEY_ID                       revoke a key at once
  operator create [--json]                a new operator (sk_op_) key
  ledger verify [--merchant ID] [--json]  recompute the books; exit 1 and list every problem if unsound

Database: DATABASE_URL (PostgreSQL) or DATA_DIR (embedded PGlite, default ./data).`;

class UsageError extends Error {}

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  'default-currency': { type: 'string' },
  verified: { type: 'boolean' },
  merchant: { type: 'string' },
  env: { type: 'string' },
  scopes: { type: 'string' },
  json: { type: 'boolean' },
  role: { type: 'string' },
  phone: { type: 'string' },
  'bank-code': { type: 'string' },
  'account-number': { type: 'string' },
  schedule: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parseRole(raw: string | undefined): Role {
  if (raw === undefined) return 'all';
  if (raw === 'all' || raw === 'api' || raw === 'worker') return raw;
  throw new UsageError('--role must be all, api or worker');
}

function parseSchedule(raw: string | undefined): 'instant' | 'daily' | undefined {
  if (raw === undefined || raw === 'instant' || raw === 'daily') return raw;
  throw new UsageError('--schedule must be instant or daily');
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing ${flag}`);
  return value;
}

function parseScopes(raw: string | undefined): Scope[] | undefined {
  if (raw === undefined) return undefined;
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
  return scopes as Scope[];
}

function print(json: boolean | undefined, value: Record<string, unknown>): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  for (const [k, v] of Object.entries(value)) process.stdout.write(`${k}: ${String(v)}\n`);
}

async function withContext<T>(config: Config, fn: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  const ctx = await openContext(config);
  try {
    return await fn(ctx);
  } finally {
    await ctx.db.close();
  }
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs reports unknown options and missing option values as TypeErrors with ERR_PARSE_ARGS_* codes.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
      throw new UsageError((error as Error).message);
    throw error;
  }
}

function noMoreThan(positionals: string[], count: number): void {
  if (positionals.length > count)
    throw new UsageError(`unexpected argument '${positionals.slice(count).join(' ')}'`);
}

/** Every argument is checked before the database is opened, so a typo never waits on (or locks) it. */
async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv);
  const [command, sub, arg, arg2] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve':
      noMoreThan(positionals, 1);
      return serve(config, parseRole(values.role));
    case 'migrate': {
      noMoreThan(positionals, 1);
      const db = await openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        schema: config.databaseSchema,
      });
      try {
        const applied = await migrate(db);
        process.stdout.write(
          applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n',
        );
      } finally {
        await db.close();
      }
      return;
    }
    case 'merchant create': {
      noMoreThan(positionals, 2);
      const input = {
        name: required(values.name, '--name'),
        email: required(values.email, '--email'),
        defaultCurrency: values['default-currency'],
        verified: values.verified,
      };
      return withContext(config, async (ctx) =>
        print(values.json, { ...(await createMerchant(ctx, input)) }),
      );
    }
    case 'merchant verify': {
      noMoreThan(positionals, 3);
      const merchantId = required(arg, 'MERCHANT_ID');
      return withContext(config, async (ctx) => {
        await setMerchantVerification(ctx, merchantId, 'verified');
        process.stdout.write(`merchant ${merchantId} is verified; its live keys now work\n`);
      });
    }
    case 'merchant rate-limit': {
      noMoreThan(positionals, 4);
      const merchantId = required(arg, 'MERCHANT_ID');
      const raw = required(arg2, 'N|default');
      if (raw !== 'default' && !/^[1-9]\d*$/.test(raw))
        throw new UsageError(
          `the rate limit is a whole number of requests per minute or 'default', got '${raw}'`,
        );
      return withContext(config, async (ctx) => {
        await setMerchantRateLimit(ctx, merchantId, raw === 'default' ? null : Number(raw));
        process.stdout.write(`merchant ${merchantId}: ${raw} requests per minute per key\n`);
      });
    }
    case 'merchant payout-method': {
      noMoreThan(positionals, 3);
      const merchantId = required(arg, 'MERCHANT_ID');
      const env = required(values.env, '--env');
      if (env !== 'test' && env !== 'live') throw new UsageError('--env must be test or live');
      if (
        (values.phone === undefined) ===
        (values['bank-code'] === undefined && values['account-number'] === undefined)
      )
        throw new UsageError('give --phone, or --bank-code and --account-number');
      const schedule = parseSchedule(values.schedule);
      const input = values.phone
        ? { method: 'mobile_money' as const, phone: values.phone, schedule }
        : {
            method: 'bank_transfer' as const,
            bank_code: values['bank-code'],
            account_number: values['account-number'],
            schedule,
          };
      return withContext(config, async (ctx) => {
        const owner = { merchantId, livemode: env === 'live' };
        print(values.json, { ...(await setPayoutSettingsForMerchant(ctx, owner, input)) });
      });
    }
    case 'key create': {
      noMoreThan(positionals, 2);
      const merchantId = required(values.merchant, '--merchant');
      const env = required(values.env, '--env');
      if (env !== 'test' && env !== 'live') throw new UsageError('--env must be test or live');
      const scopes = parseScopes(values.scopes);
      return withContext(config, async (ctx) =>
        print(values.json, { ...(await createKey(ctx, { merchantId, env, scopes })) }),
      );
    }
    case 'key rotate': {
      noMoreThan(positionals, 3);
      const keyId = required(arg, 'KEY_ID');
      return withContext(config, async (ctx) => print(values.json, { ...(await rotateKey(ctx, keyId)) }));
    }
    case 'key revoke': {
      noMoreThan(positionals, 3);
      const keyId = required(arg, 'KEY_ID');
      return withContext(config, async (ctx) => {
        await revokeKey(ctx, keyId);
        process.stdout.write(`key ${keyId} revoked\n`);
      });
    }
    case 'operator create':
      noMoreThan(positionals, 2);
      return withContext(config, async (ctx) =>
        print(values.json, { operator_key: (await createOperatorKey(ctx)).key }),
      );
    case 'ledger verify': {
      noMoreThan(positionals, 2);
      const merchantId = values.merchant;
      return withContext(config, async (ctx) => {
        if (merchantId !== undefined && !(await findMerchant(ctx.db, merchantId))) {
          throw notFound('merchant', merchantId);
        }
        const report = await verifyLedgerReport(ctx.db, { merchantId });
        const { problems, transactions, journalRows } = report;
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ sound: problems.length === 0, transactions, journal_rows: journalRows, problems })}\n`
            : describeLedgerReport(report, merchantId),
        );
        // Not process.exit: stdout may still be flushing a long list of problems.
        if (problems.length > 0) process.exitCode = 1;
      });
    }
    default:
      throw new UsageError(`unknown command '${positionals.join(' ')}'`);
  }
}

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`safehold: ${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`safehold: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
