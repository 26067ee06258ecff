import { parseArgs } from 'node:util';
import { openContext } from './bootstrap.ts';
import { type Config, loadConfig } from './config.ts';
import { isScope, type Scope } from './domain/api-keys.ts';
import type { ServiceContext } from './operations/context.ts';
import { createKey, createOperatorKey, revokeKey, rotateKey } from './operations/manage-keys.ts';
import {
  createMerchant,
  setMerchantRateLimit,
  setMerchantVerification,
} from './operations/manage-merchants.ts';
import { serve } from './server.ts';
import { migrate } from './store/migrate.ts';

const USAGE = `Usage: safehold <command>

  serve                                   run the API (what npm start runs)
  migrate                                 apply database migrations
  merchant create --name N --email E [--default-currency KES] [--verified] [--json]
  merchant verify MERCHANT_ID             mark business verification complete (enables live keys)
  merchant rate-limit MERCHANT_ID N|default   requests per minute for the merchant's keys
  key create --merchant ID --env test|live [--scopes a,b] [--json]
  key rotate KEY_ID [--json]              new key; the old one stays valid for 24 hours
  key revoke KEY_ID                       revoke a key at once
  operator create [--json]                a new operator (sk_op_) key

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
  help: { type: 'boolean', short: 'h' },
} as const;

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

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [command, sub, arg, arg2] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve':
      return serve(config);
    case 'migrate': {
      const { openDatabase } = await import('./store/open.ts');
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
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
    case 'merchant create':
      return withContext(config, async (ctx) => {
        const created = await createMerchant(ctx, {
          name: required(values.name, '--name'),
          email: required(values.email, '--email'),
          defaultCurrency: values['default-currency'],
          verified: values.verified,
        });
        print(values.json, { ...created });
      });
    case 'merchant verify':
      return withContext(config, async (ctx) => {
        await setMerchantVerification(ctx, required(arg, 'MERCHANT_ID'), 'verified');
        process.stdout.write(`merchant ${arg} is verified; its live keys now work\n`);
      });
    case 'merchant rate-limit':
      return withContext(config, async (ctx) => {
        const raw = required(arg2, 'N|default');
        await setMerchantRateLimit(ctx, required(arg, 'MERCHANT_ID'), raw === 'default' ? null : Number(raw));
        process.stdout.write(`merchant ${arg}: ${raw} requests per minute per key\n`);
      });
    case 'key create':
      return withContext(config, async (ctx) => {
        const env = required(values.env, '--env');
        if (env !== 'test' && env !== 'live') throw new UsageError('--env must be test or live');
        const issued = await createKey(ctx, {
          merchantId: required(values.merchant, '--merchant'),
          env,
          scopes: parseScopes(values.scopes),
        });
        print(values.json, { ...issued });
      });
    case 'key rotate':
      return withContext(config, async (ctx) =>
        print(values.json, { ...(await rotateKey(ctx, required(arg, 'KEY_ID'))) }),
      );
    case 'key revoke':
      return withContext(config, async (ctx) => {
        await revokeKey(ctx, required(arg, 'KEY_ID'));
        process.stdout.write(`key ${arg} revoked\n`);
      });
    case 'operator create':
      return withContext(config, async (ctx) =>
        print(values.json, { operator_key: (await createOperatorKey(ctx)).key }),
      );
    default:
      throw new UsageError(`unknown command '${positionals.join(' ')}'`);
  }
}

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof Error && error.name === 'TypeError' && 'code' in error)
    ) {
      process.stderr.write(`safehold: ${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`safehold: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
