/**
 * The package's library entry (`import { verifyWebhook } from 'safehold'`): the receiver kit for
 * merchants who take Safehold webhooks. The service itself runs from bin/safehold.js.
 */
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
} from './kit/verify-webhook.ts';
