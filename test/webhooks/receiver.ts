import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP receiver on 127.0.0.1 (port 0) that records every request, for webhook tests. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Do not answer at all until release() is called (a receiver that hangs). */
  hang?: boolean;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** How the next requests are answered (default 200 "ok"). */
  answer: (request: ReceivedRequest, index: number) => Answer;
  /** Answers every hanging request with 200. */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(answer?: Receiver['answer']): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: answer ?? (() => ({ status: 200, body: 'ok' })),
    release() {
      for (const res of hanging.splice(0)) if (!res.writableEnded) res.end('released');
    },
    async close() {
      receiver.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.received.push(request);
      const a = receiver.answer(request, receiver.received.length - 1);
      if (a.hang) {
        hanging.push(res);
        return;
      }
      res.writeHead(a.status, a.headers);
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** Polls until the condition holds (for work running in the background); fails after a while. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
