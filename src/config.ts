import { isIP } from 'node:net';
import { DARAJA_SANDBOX_URL, type DarajaConfig } from './rails/mpesa-daraja.ts';

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
 *   WEBHOOK_TIMEOUT_MS, WEBHOOK_CONCURRENCY, WEBHOOK_CONCURRENCY_PER_ENDPOINT, WEBHOOK_POLL_MS,
 *   WEBHOOK_EGRESS_RANGES   webhook delivery (docs/configuration.md)
 *   MPESA_CONSUMER_KEY, MPESA_CONSUMER_SECRET, MPESA_SHORTCODE, MPESA_PASSKEY, MPESA_BASE_URL,
 *   MPESA_CALLBACK_BASE_URL live M-Pesa (Daraja STK Push); all four credentials or none
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
  /** A webhook receiver must answer 2xx within this long (default 10 s). */
  webhookTimeoutMs: number;
  /** Webhook requests in flight at once per worker process, and per endpoint (or callback host). */
  webhookConcurrency: number;
  webhookConcurrencyPerEndpoint: number;
  /** How often the webhook dispatcher looks for new events and due retries when idle. */
  webhookPollMs: number;
  /** The CIDR ranges webhooks are sent from, published by GET /v1/webhook_egress_ranges. */
  webhookEgressRanges: string[];
  /** Live M-Pesa through Daraja when all its credentials are set (MPESA_*); else live mobile money is refused. */
  mpesa: DarajaConfig | undefined;
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

/** Documentation ranges (RFC 5737): placeholders until the operator configures the real ones. */
export const DEFAULT_EGRESS_RANGES = ['192.0.2.0/24', '198.51.100.0/24'];

function cidrList(env: NodeJS.ProcessEnv, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((item) => {
    const cidr = item.trim();
    const [address = '', prefix = '', ...rest] = cidr.split('/');
    const family = isIP(address);
    const bits = Number(prefix);
    const max = family === 6 ? 128 : 32;
    if (family === 0 || rest.length > 0 || !/^\d{1,3}$/.test(prefix) || bits > max)
      throw new Error(`${name} must be a comma-separated list of CIDR ranges (192.0.2.0/24), got '${cidr}'`);
    return cidr;
  });
}

function baseUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(raw))
    throw new Error(`${name} must be an http(s) URL without query or fragment, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}

const MPESA_CREDENTIALS = ['MPESA_CONSUMER_KEY', 'MPESA_CONSUMER_SECRET', 'MPESA_SHORTCODE', 'MPESA_PASSKEY'];

/** Daraja's settings when all four credentials are set; a partial set is a mistake worth stopping for. */
function mpesaConfig(env: NodeJS.ProcessEnv): DarajaConfig | undefined {
  const missing = MPESA_CREDENTIALS.filter((name) => !env[name]);
  if (missing.length === MPESA_CREDENTIALS.length) return undefined;
  if (missing.length > 0)
    throw new Error(
      `live M-Pesa needs ${MPESA_CREDENTIALS.join(', ')} together; missing ${missing.join(', ')}`,
    );
  const shortcode = env.MPESA_SHORTCODE ?? '';
  if (!/^\d+$/.test(shortcode)) throw new Error(`MPESA_SHORTCODE must be digits only, got '${shortcode}'`);
  const callbackBaseUrl = baseUrl(env, 'MPESA_CALLBACK_BASE_URL');
  return {
    consumerKey: env.MPESA_CONSUMER_KEY ?? '',
    consumerSecret: env.MPESA_CONSUMER_SECRET ?? '',
    shortcode,
    passkey: env.MPESA_PASSKEY ?? '',
    baseUrl: baseUrl(env, 'MPESA_BASE_URL') ?? DARAJA_SANDBOX_URL,
    ...(callbackBaseUrl ? { callbackBaseUrl } : {}),
  };
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
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 128),
    webhookConcurrencyPerEndpoint: integer(env, 'WEBHOOK_CONCURRENCY_PER_ENDPOINT', 16),
    webhookPollMs: integer(env, 'WEBHOOK_POLL_MS', 200),
    webhookEgressRanges: cidrList(env, 'WEBHOOK_EGRESS_RANGES', DEFAULT_EGRESS_RANGES),
    mpesa: mpesaConfig(env),
  };
}
