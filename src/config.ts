/**
 * The one module that reads the environment. Everything else receives a Config.
 *
 *   PORT                    port to listen on (default 3000; 0 picks a free one)
 *   HOST                    interface to bind (default 127.0.0.1)
 *   DATABASE_URL            PostgreSQL connection string; unset means embedded PGlite in DATA_DIR
 *   DATABASE_SCHEMA         PostgreSQL schema to work in instead of public (created if missing);
 *                           lets several instances or test runs share one database in isolation
 *   DATA_DIR                PGlite data folder (default ./data); one process at a time
 *   REDIS_URL               shares rate limits across instances
 *   PUBLIC_URL              base of the URLs the service hands out (default http://localhost:PORT,
 *                           following the port actually bound when PORT=0)
 *   LOG_LEVEL               pino level (default info)
 *   SAFEHOLD_SECRET         derives payment-link tokens; generated once and kept in the database when unset
 *   RATE_LIMIT_PER_MINUTE   default requests per minute per key (default 60)
 *   PAYMENT_WINDOW_SECONDS  how long a payment link stays payable (default 24 h)
 */
export type Role = 'all' | 'api' | 'worker';

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection string; when absent the service uses embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema instead of public (DATABASE_SCHEMA); ignored with PGlite. */
  databaseSchema: string | undefined;
  dataDir: string;
  /** Shares rate limits across instances when set. */
  redisUrl: string | undefined;
  publicUrl: string;
  logLevel: string;
  /** Derives payment-link tokens; generated once and kept in the database when unset. */
  secret: string | undefined;
  rateLimitPerMinute: number;
  paymentWindowSeconds: number;
  /** SMTP server for e-mail (buyer links), e.g. smtp://user:pass@mail.example.com:587; unset: mail is logged. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** How often the worker looks for due jobs. */
  workerPollMs: number;
  /** How long the test-mode mobile-money simulator takes to call back (a buyer entering the PIN). */
  simulatorDelayMs: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number >= ${min}, got '${raw}'`);
  return value;
}

function schemaName(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  // It is spliced into CREATE SCHEMA and search_path, so only a plain identifier is accepted.
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw))
    throw new Error(`DATABASE_SCHEMA must be a lower-case identifier (a-z, 0-9, _), got '${raw}'`);
  return raw;
}

/** The public URL when PUBLIC_URL is unset; the server recomputes it from the bound port when PORT=0. */
export function defaultPublicUrl(port: number): string {
  return `http://localhost:${port}`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    databaseSchema: schemaName(env.DATABASE_SCHEMA),
    dataDir: env.DATA_DIR || './data',
    redisUrl: env.REDIS_URL || undefined,
    publicUrl: (env.PUBLIC_URL || defaultPublicUrl(port)).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL || 'info',
    secret: env.SAFEHOLD_SECRET || undefined,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 60),
    paymentWindowSeconds: integer(env, 'PAYMENT_WINDOW_SECONDS', 24 * 60 * 60),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Safehold <no-reply@localhost>',
    workerPollMs: integer(env, 'WORKER_POLL_MS', 500),
    simulatorDelayMs: integer(env, 'SIMULATOR_DELAY_MS', 3000, 0),
  };
}
