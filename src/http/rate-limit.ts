import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  consume(key: string, limitPerMinute: number): Promise<RateDecision>;
}

type Flexible = RateLimiterMemory | RateLimiterRedis;

/**
 * Per-key limits over a 60-second window, through rate-limiter-flexible: in process, or in Redis
 * (shared by every instance) with an in-process fallback if Redis is unreachable. Merchants can
 * have their own limit, so there is one limiter per distinct limit.
 */
export function createRateLimiter(redis?: Redis): RateLimiter {
  const limiters = new Map<number, Flexible>();
  const limiterFor = (points: number): Flexible => {
    let limiter = limiters.get(points);
    if (!limiter) {
      const memory = new RateLimiterMemory({ points, duration: 60, keyPrefix: `rl${points}` });
      limiter = redis
        ? new RateLimiterRedis({
            storeClient: redis,
            points,
            duration: 60,
            keyPrefix: `safehold:rl:${points}`,
            insuranceLimiter: memory,
          })
        : memory;
      limiters.set(points, limiter);
    }
    return limiter;
  };
  return {
    async consume(key, limit) {
      try {
        const res = await limiterFor(limit).consume(key, 1);
        return {
          allowed: true,
          limit,
          remaining: res.remainingPoints,
          resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
        };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return {
          allowed: false,
          limit,
          remaining: 0,
          resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        };
      }
    },
  };
}
