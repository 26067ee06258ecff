import { pino } from 'pino';
import { connectRedis, openContext } from './bootstrap.ts';
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import type { ServiceContext } from './operations/context.ts';
import { createOperatorKey } from './operations/manage-keys.ts';
import { createMerchant } from './operations/manage-merchants.ts';
import { countMerchants } from './store/merchants.ts';

/** On an empty database: a demo merchant and an operator key, printed once with a ready curl. */
async function seedDemo(ctx: ServiceContext): Promise<string | undefined> {
  if ((await countMerchants(ctx.db)) > 0) return undefined;
  const merchant = await createMerchant(ctx, { name: 'Demo Merchant', email: 'demo@example.com' });
  const operator = await createOperatorKey(ctx);
  return [
    '',
    'First start: created a demo merchant. These keys are shown only now; keep them.',
    `  merchant id:   ${merchant.merchant_id}`,
    `  test key:      ${merchant.test_key}`,
    `  live key:      ${merchant.live_key}  (refused until the business is verified)`,
    `  operator key:  ${operator.key}`,
    '',
    'Create a protected transaction:',
    `  curl -s ${ctx.publicUrl}/v1/transactions \\`,
    `    -H "Authorization: Bearer ${merchant.test_key}" \\`,
    '    -H "Content-Type: application/json" \\',
    `    -d '{"amount": 1500.50, "title": "Used phone", "merchant_reference": "order-1001"}'`,
    '',
  ].join('\n');
}

export async function serve(config: Config): Promise<void> {
  const logger = pino({ level: config.logLevel });
  const ctx = await openContext(config);
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  redis?.on('error', (error) =>
    logger.warn({ err: error }, 'redis error; rate limits fall back to this process'),
  );
  const app = await buildApp({
    ctx,
    rateLimiter: createRateLimiter(redis),
    defaultRateLimitPerMinute: config.rateLimitPerMinute,
    logger,
  });
  const banner = await seedDemo(ctx);
  await app.listen({ port: config.port, host: config.host });
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
  process.stdout.write(
    `Safehold is listening on ${config.publicUrl} (data: ${where}); API docs at ${config.publicUrl}/docs\n`,
  );
  if (banner) process.stdout.write(`${banner}\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    try {
      await app.close();
      redis?.disconnect();
      await ctx.db.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
