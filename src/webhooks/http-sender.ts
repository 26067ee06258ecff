import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../operations/callback-url-guard.ts';

/**
 * Sends one webhook attempt: an HTTP POST with a deadline, redirects not followed, the response
 * kept as a short excerpt. In live mode the receiver's host is resolved here and the connection
 * goes only to an address that was checked to be public (no loopback, private or link-local),
 * so a DNS answer that changed since registration cannot turn a webhook against the network.
 */

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Live mode: refuse non-public addresses. */
  publicOnly: boolean;
}

export interface WebhookPostResult {
  /** A 2xx within the deadline. */
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** The first bytes of the response body, as text. */
  excerpt: string | null;
  /** Why no usable answer came: network error, timeout, refused address. */
  error: string | null;
}

const EXCERPT_BYTES = 1024;

/** Text PostgreSQL can store: no NUL, no lone surrogates. */
function storable(text: string): string {
  return text.replaceAll(String.fromCharCode(0), '').toWellFormed();
}

class RefusedAddress extends Error {}

/** dns.lookup, then refuse any answer that is not public (the check sits right before connect). */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (addresses.length === 0 || refused) {
      return callback(
        new RefusedAddress(
          `refused: ${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address (live mode)`,
        ) as NodeJS.ErrnoException,
        '',
        0,
      );
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
};

// Keep-alive pools, one set per mode: a socket a test-mode request opened to a private address must
// never carry a live-mode request.
const agents = {
  test: { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) },
  live: {
    http: new HttpAgent({ keepAlive: true, lookup: publicLookup }),
    https: new HttpsAgent({ keepAlive: true, lookup: publicLookup }),
  },
};

function describe(error: unknown): string {
  if (error instanceof RefusedAddress) return error.message;
  const e = error as NodeJS.ErrnoException;
  return storable(String(e?.message ?? error)).slice(0, 500);
}

export async function postWebhook(post: WebhookPost): Promise<WebhookPostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    return { ok: false, statusCode: null, latencyMs: 0, excerpt: null, error: 'invalid URL' };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (post.publicOnly && isIP(host) && !isPublicAddress(host)) {
    return {
      ok: false,
      statusCode: null,
      latencyMs: 0,
      excerpt: null,
      error: `refused: ${host} is not a public address (live mode)`,
    };
  }
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') {
    return {
      ok: false,
      statusCode: null,
      latencyMs: 0,
      excerpt: null,
      error: `unsupported scheme ${url.protocol}`,
    };
  }
  const pool = post.publicOnly ? agents.live : agents.test;
  const send = secure ? httpsRequest : httpRequest;

  return new Promise<WebhookPostResult>((resolve) => {
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      const excerpt = chunks.length > 0 ? storable(Buffer.concat(chunks).toString('utf8')) : null;
      resolve({ ok, statusCode, latencyMs: elapsed(), excerpt, error });
    };
    const req = send(url, {
      method: 'POST',
      agent: secure ? pool.https : pool.http,
      headers: { ...post.headers, 'content-length': String(Buffer.byteLength(post.body)) },
    });
    const timer = setTimeout(() => {
      // A status that arrived in time counts; only the body was slow. No status: the attempt failed.
      if (statusCode !== null) finish(null);
      else finish(`timed out after ${post.timeoutMs} ms without a response`);
      req.destroy();
    }, post.timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      statusCode = res.statusCode ?? null;
      res.on('data', (chunk: Buffer) => {
        if (kept < EXCERPT_BYTES) {
          const part = chunk.subarray(0, EXCERPT_BYTES - kept);
          chunks.push(part);
          kept += part.length;
        }
      });
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
      res.on('aborted', () => finish(null));
    });
    req.on('error', (error) => finish(describe(error)));
    req.end(post.body);
  });
}
