import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '../domain/api-keys.ts';
import { ApiError } from '../domain/errors.ts';
import { authenticate } from '../operations/authenticate.ts';
import { requireMerchant, requireOperator } from '../operations/authorize.ts';
import type { ServiceContext } from '../operations/context.ts';
import type { MerchantPrincipal, OperatorPrincipal, Principal } from '../operations/principal.ts';
import type { RateLimiter } from './rate-limit.ts';

/** What a route needs from its caller: a merchant key with a scope, or the operator's key. */
export type Access = Scope | 'operator';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    access?: Access;
    /** A merchant route the operator's key may also call (reading a dispute, resolving its case). */
    operatorToo?: boolean;
  }
}

/**
 * On every keyed route, before the body is read: authenticate (401), count against the key's
 * rate (429), then check live verification and scope (403). Keyed responses carry RateLimit-*.
 */
export function installAuth(
  app: FastifyInstance,
  ctx: ServiceContext,
  limiter: RateLimiter,
  defaultPerMinute: number,
): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.access;
    if (!access) return;
    const principal = await authenticate(ctx, request.headers.authorization).catch((error: unknown) => {
      // RFC 9110: a 401 names the scheme the client should use.
      if (error instanceof ApiError && error.code === 'invalid_api_key') {
        reply.header('WWW-Authenticate', 'Bearer realm="safehold"');
      }
      throw error;
    });
    const limit = (principal.kind === 'merchant' ? principal.rateLimitPerMinute : null) ?? defaultPerMinute;
    const decision = await limiter.consume(principal.keyId, limit);
    reply.header('RateLimit-Limit', String(decision.limit));
    reply.header('RateLimit-Remaining', String(decision.remaining));
    reply.header('RateLimit-Reset', String(decision.resetSeconds));
    if (!decision.allowed) {
      throw new ApiError(
        'rate_limit_exceeded',
        `Too many requests: this key may make ${decision.limit} per minute. Retry after ${decision.resetSeconds} s.`,
        { headers: { 'Retry-After': String(decision.resetSeconds) } },
      );
    }
    if (access === 'operator') requireOperator(principal);
    else if (!(principal.kind === 'operator' && request.routeOptions.config.operatorToo)) {
      requireMerchant(principal, access);
    }
    request.principal = principal;
  });
}

export function merchantOf(request: FastifyRequest): MerchantPrincipal {
  const principal = request.principal;
  if (principal?.kind !== 'merchant') throw new Error('route reached without a merchant principal');
  return principal;
}

/** The caller of a route open to a merchant key and the operator's (config.operatorToo). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw new Error('route reached without a principal');
  return principal;
}

export function operatorOf(request: FastifyRequest): OperatorPrincipal {
  const principal = request.principal;
  if (principal?.kind !== 'operator') throw new Error('route reached without the operator principal');
  return principal;
}
