import { buildApp } from '../../src/http/app.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import type { ServiceContext } from '../../src/operations/context.ts';

/** A POST through the API as one merchant: the answer's body, or an error for any status >= 300. */
export type ApiPost = (
  path: string,
  payload: Record<string, unknown>,
) => Promise<{ service_transaction_id: string; status: string }>;

/**
 * Runs `fn` with the API served in this process (inject: no socket, a rate limit out of reach),
 * as the merchant whose key is given; the app is closed afterwards.
 */
export async function withInProcessApi<T>(
  ctx: ServiceContext,
  key: string,
  fn: (post: ApiPost) => Promise<T>,
): Promise<T> {
  const app = await buildApp({
    ctx,
    rateLimiter: createRateLimiter(),
    defaultRateLimitPerMinute: 100_000_000,
    logger: false,
  });
  try {
    return await fn(async (path, payload) => {
      const res = await app.inject({
        method: 'POST',
        url: path,
        payload,
        headers: { authorization: `Bearer ${key}` },
      });
      if (res.statusCode >= 300) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
      return res.json() as { service_transaction_id: string; status: string };
    });
  } finally {
    await app.close();
  }
}
