import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import type { ServiceContext } from './operations/context.ts';
import { resolveServiceSecret } from './operations/service-secret.ts';
import { webhookSettingsFrom } from './operations/webhook-settings.ts';
import type { Db } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { openDatabase } from './store/open.ts';

/** Opens and migrates the database and builds the context every command and the server share. */
export async function openContext(
  config: Config,
  options: { clock?: Clock; dataDir?: string | undefined; schema?: string } = {},
): Promise<ServiceContext> {
  const db: Db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: 'dataDir' in options ? options.dataDir : config.dataDir,
    schema: options.schema ?? config.databaseSchema,
  });
  try {
    await migrate(db);
    return {
      db,
      clock: options.clock ?? systemClock,
      publicUrl: config.publicUrl,
      paymentWindowSeconds: config.paymentWindowSeconds,
      simulatorDelayMs: config.simulatorDelayMs,
      linkSecret: await resolveServiceSecret(db, config.secret),
      webhooks: webhookSettingsFrom(config),
      ...(config.mpesa ? { mpesa: config.mpesa } : {}),
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

export function connectRedis(url: string): Redis {
  // Without an offline queue a Redis outage fails fast and the limiter falls back to memory.
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
}
