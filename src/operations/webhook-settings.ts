import { type Config, loadConfig } from '../config.ts';
import type { ServiceContext } from './context.ts';

/** How webhooks are sent (from the WEBHOOK_* variables; see docs/configuration.md). */
export interface WebhookSettings {
  /** A receiver must answer 2xx within this long, or the attempt fails. */
  timeoutMs: number;
  /** Requests in flight at once in one worker process. */
  concurrency: number;
  /** Requests in flight at once to one endpoint (or one callback_url origin) in one worker process. */
  perEndpoint: number;
  /** How often an idle dispatcher looks for new events and due retries. */
  pollMs: number;
  /** Published by GET /v1/webhook_egress_ranges. */
  egressRanges: readonly string[];
}

export function webhookSettingsFrom(config: Config): WebhookSettings {
  return {
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
    perEndpoint: config.webhookConcurrencyPerEndpoint,
    pollMs: config.webhookPollMs,
    egressRanges: config.webhookEgressRanges,
  };
}

/** The defaults of the WEBHOOK_* variables (a context built without a Config, e.g. in a script). */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = webhookSettingsFrom(loadConfig({}));

export function webhookSettings(ctx: Pick<ServiceContext, 'webhooks'>): WebhookSettings {
  return ctx.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
}
