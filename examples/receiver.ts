/**
 * A runnable Safehold webhook receiver (node:http, no framework), as spec 6.3 describes:
 *
 *   WEBHOOK_SECRET=whsec_… PORT=4000 node examples/receiver.ts
 *
 * It reads the raw body, verifies it with the receiver kit (in your project:
 * `import { verifyWebhook } from 'safehold'`), and answers
 *   200  for a verified event, and again (without processing it twice) for a repeat of one,
 *   400  for a stale or missing timestamp (replay protection, 5 minutes) or a body that is not JSON,
 *   401  for a missing or wrong signature.
 * Events are deduplicated by event_id. This example keeps the ids in memory; a real receiver stores
 * them with its own data (a unique column, written in the transaction that applies the event), and
 * reconciles by merchant_order_id or merchant_reference.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  verifyWebhook,
  type WebhookEvent,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
} from '../src/index.ts';

export interface ReceiverOptions {
  /** Your signing secret, or several while you switch to a rotated one. */
  secret: string | string[];
  /** Called once per event_id. */
  onEvent?: (event: WebhookEvent) => void | Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export function createReceiver(options: ReceiverOptions): Server {
  const seen = new Set<string>();
  return createServer((req, res) => {
    const reply = (status: number, body: Record<string, unknown>) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return reply(405, { error: 'POST only' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', async () => {
      if (size > MAX_BODY) return reply(413, { error: 'body too large' });
      // The raw bytes, exactly as received: verify before parsing.
      const raw = Buffer.concat(chunks);
      let event: WebhookEvent;
      try {
        event = verifyWebhook(raw, req.headers, options.secret);
      } catch (error) {
        if (error instanceof WebhookSignatureError) return reply(401, { error: error.message });
        if (error instanceof WebhookTimestampError) return reply(400, { error: error.message });
        if (error instanceof WebhookVerificationError) return reply(400, { error: error.message });
        throw error;
      }
      // At-least-once delivery: a repeat is acknowledged (so retries stop) but not applied again.
      if (seen.has(event.event_id)) return reply(200, { received: true, duplicate: true });
      try {
        await options.onEvent?.(event);
      } catch (error) {
        // Not applied: answer 500 so Safehold retries (60 s, 5 min, 30 min, 2 h).
        return reply(500, { error: String(error) });
      }
      seen.add(event.event_id);
      return reply(200, { received: true });
    });
  });
}

if (import.meta.main) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    process.stderr.write('Set WEBHOOK_SECRET to your signing secret (whsec_…).\n');
    process.exit(1);
  }
  const server = createReceiver({
    secret,
    onEvent(event) {
      process.stdout.write(
        `${event.event_type} ${event.event_id} order=${event.merchant_order_id ?? '-'} ` +
          `ref=${event.merchant_reference ?? '-'} status=${event.status ?? '-'}\n`,
      );
    },
  });
  server.listen(Number(process.env.PORT ?? 4000), process.env.HOST ?? '127.0.0.1', () => {
    const { address, port } = server.address() as AddressInfo;
    process.stdout.write(`Webhook receiver listening on http://${address}:${port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  process.on('SIGINT', () => server.close(() => process.exit(0)));
}
