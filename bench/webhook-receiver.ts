/**
 * The webhook receiver of bench/webhooks.ts, in its own process (as a merchant's receiver would be
 * on its own machine), so the load generator does not slow its answers. Answers 200 at once and
 * keeps each delivery's first arrival (event id and path), reporting over IPC:
 *   { type: 'count' }  -> { count, requests }
 *   { type: 'dump' }   -> { arrivals: [at, occurredAt][] }
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const first = new Map<string, [number, number]>();
let requests = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    requests += 1;
    const key = `${req.headers['x-service-event-id']} ${req.url}`;
    if (!first.has(key)) {
      const match = /"occurred_at":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'));
      first.set(key, [at, match ? Date.parse(match[1] as string) : Number.NaN]);
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (message: { type: string }) => {
  if (message.type === 'count') process.send?.({ type: 'count', count: first.size, requests });
  if (message.type === 'dump') process.send?.({ type: 'dump', arrivals: [...first.values()] });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
