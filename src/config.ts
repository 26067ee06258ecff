/** The one module that reads the environment. Everything else receives a Config. */
export type Role = 'all' | 'api' | 'worker';

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection string; when absent the service uses embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Shares rate limits across instances when set. */
  redisUrl: string | undefined;
  publicUrl: string;
  logLevel: string;
  /** Derives payment-link tokens; generated once and kept in the database when unset. */
  secret: string | undefined;
  rateLimitPerMinute: number;
  paymentWindowSeconds: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number >= ${min}, got '${raw}'`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    redisUrl: env.REDIS_URL || undefined,
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL || 'info',
    secret: env.SAFEHOLD_SECRET || undefined,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 60),
    paymentWindowSeconds: integer(env, 'PAYMENT_WINDOW_SECONDS', 24 * 60 * 60),
  };
}
