import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Safaricom's Daraja on 127.0.0.1:0: it checks the OAuth Basic header and the
 * bearer token as Daraja does, records every STK push, answers like Daraja (or refuses, or never
 * answers, as told), and posts callbacks to the CallBackURL a push named, over real HTTP.
 */
export const CREDENTIALS = {
  consumerKey: 'fake-consumer-key',
  consumerSecret: 'fake-consumer-secret-3b9f',
  shortcode: '174379',
  passkey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919',
};

export interface RecordedPush {
  authorization: string | undefined;
  body: Record<string, unknown>;
  checkoutRequestId: string;
}

export type PushReply =
  | 'accept'
  | 'hang'
  | { status: number; body: Record<string, unknown> }
  /** Answers with Daraja's invalid-token error whatever the token, this many times. */
  | { revokeTokens: true };

export interface FakeDaraja {
  baseUrl: string;
  /** Tokens handed out, in order. */
  tokens: string[];
  /** OAuth requests with a wrong Basic header. */
  badCredentials: number;
  pushes: RecordedPush[];
  /** How the next pushes are answered (one entry per push, then 'accept'). */
  replies: PushReply[];
  /** Posts Daraja's callback for a push to its CallBackURL; resolves with the service's answer. */
  callback(
    push: RecordedPush,
    resultCode: number,
    resultDesc?: string,
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startFakeDaraja(): Promise<FakeDaraja> {
  const valid = new Set<string>();
  const hung: ServerResponse[] = [];
  const fake: Omit<FakeDaraja, 'baseUrl' | 'callback' | 'close'> = {
    tokens: [],
    badCredentials: 0,
    pushes: [],
    replies: [],
  };
  const expectedBasic = `Basic ${Buffer.from(`${CREDENTIALS.consumerKey}:${CREDENTIALS.consumerSecret}`).toString('base64')}`;

  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (request.method === 'GET' && url.pathname === '/oauth/v1/generate') {
      if (
        url.searchParams.get('grant_type') !== 'client_credentials' ||
        request.headers.authorization !== expectedBasic
      ) {
        fake.badCredentials++;
        return send(response, 400, {
          errorCode: '400.008.01',
          errorMessage: 'Invalid Authentication passed',
        });
      }
      const token = randomBytes(12).toString('hex');
      fake.tokens.push(token);
      valid.add(token);
      return send(response, 200, { access_token: token, expires_in: '3599' });
    }
    if (request.method === 'POST' && url.pathname === '/mpesa/stkpush/v1/processrequest') {
      const body = JSON.parse(await readBody(request)) as Record<string, unknown>;
      const reply = fake.replies.shift() ?? 'accept';
      const bearer = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (typeof reply === 'object' && 'revokeTokens' in reply) valid.clear();
      if (!valid.has(bearer)) {
        return send(response, 404, {
          requestId: 'req-1',
          errorCode: '404.001.03',
          errorMessage: 'Invalid Access Token',
        });
      }
      const checkoutRequestId = `ws_CO_${randomBytes(10).toString('hex')}`;
      fake.pushes.push({ authorization: request.headers.authorization, body, checkoutRequestId });
      if (reply === 'hang') {
        hung.push(response);
        return;
      }
      if (typeof reply === 'object' && 'status' in reply) return send(response, reply.status, reply.body);
      return send(response, 200, {
        MerchantRequestID: `29115-${fake.pushes.length}`,
        CheckoutRequestID: checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      });
    }
    send(response, 404, { errorCode: '404.001.01', errorMessage: 'Resource not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}`,
    async callback(push: RecordedPush, resultCode: number, resultDesc?: string) {
      const stkCallback: Record<string, unknown> = {
        MerchantRequestID: '29115-1',
        CheckoutRequestID: push.checkoutRequestId,
        ResultCode: resultCode,
        ResultDesc:
          resultDesc ?? (resultCode === 0 ? 'The service request is processed successfully.' : 'Failed'),
      };
      if (resultCode === 0) {
        stkCallback.CallbackMetadata = {
          Item: [
            { Name: 'Amount', Value: push.body.Amount },
            { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
            { Name: 'TransactionDate', Value: 20191219102115 },
            { Name: 'PhoneNumber', Value: Number(push.body.PhoneNumber) },
          ],
        };
      }
      const response = await fetch(String(push.body.CallBackURL), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Body: { stkCallback } }),
      });
      return { status: response.status, body: await response.text() };
    },
    async close() {
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
