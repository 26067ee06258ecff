import type { Clock } from '../domain/clock.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { DarajaConfig } from '../rails/mpesa-daraja.ts';
import type { Db } from '../store/db.ts';
import type { WebhookSettings } from './webhook-settings.ts';

/** What every operation needs from the running service; built once at start-up. */
export interface ServiceContext {
  db: Db;
  clock: Clock;
  /** Base of every URL the service hands out (payment links), without a trailing slash. */
  publicUrl: string;
  /** How long a new transaction's payment link stays payable. */
  paymentWindowSeconds: number;
  /** Secret that derives link tokens; from SAFEHOLD_SECRET or generated once and kept in the database. */
  linkSecret: string;
  /** How long the test-mode mobile-money simulator takes to call back (default 3 s, like a buyer entering a PIN). */
  simulatorDelayMs?: number;
  /** Outgoing e-mail (the buyer's link); absent in CLI commands, which send none. */
  mailer?: Mailer;
  /** Webhook delivery settings (WEBHOOK_*); defaults when absent. */
  webhooks?: WebhookSettings;
  /** Live M-Pesa (Daraja STK Push) when configured (MPESA_*); live mobile money is refused without it. */
  mpesa?: DarajaConfig;
}
