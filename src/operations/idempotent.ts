import { ApiError, invalid } from '../domain/errors.ts';
import type { Queryable } from '../store/db.ts';
import { claimIdempotencyKey, completeIdempotencyKey, type IdempotencyScope } from '../store/idempotency.ts';

export interface MutationOutcome {
  status: number;
  resourceType: string;
  resourceId: string;
}

export interface IdempotentOutcome extends MutationOutcome {
  /** True when this answer repeats an earlier request's (Idempotent-Replayed: true). */
  replayed: boolean;
}

/** One idempotency key, from the Idempotency-Key header or the idempotency_key field; both given must agree. */
export function idempotencyKeyOf(
  headerKey: string | undefined,
  bodyKey: string | undefined,
): string | undefined {
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) {
    throw invalid('idempotency_key', 'The Idempotency-Key header and idempotency_key field differ.');
  }
  return headerKey ?? bodyKey;
}

/** One keyed request: whose key it is, the key (if any), what it does and its body's fingerprint. */
export interface KeyedRequest {
  /** The merchant environment the key belongs to (for the operator: the object's). */
  owner: { merchantId: string; livemode: boolean };
  key: string | undefined;
  operation: string;
  fingerprint: string;
  now: Date;
}

/**
 * Runs one mutation under an optional idempotency key, inside the caller's database transaction,
 * so the key, the change and its events commit or roll back together. A repeat with the same
 * key and body replays the first result (status 200); a different body or operation is 409.
 * Failed mutations roll back their claim, so a retry after an error runs afresh.
 */
export async function runIdempotent(
  tx: Queryable,
  request: KeyedRequest,
  mutate: () => Promise<MutationOutcome>,
): Promise<IdempotentOutcome> {
  const { owner, key, operation, fingerprint, now } = request;
  const scope: IdempotencyScope | undefined = key === undefined ? undefined : { ...owner, key };
  if (scope) {
    const earlier = await claimIdempotencyKey(tx, scope, operation, fingerprint, now);
    if (earlier) {
      if (earlier.operation !== operation || earlier.request_fingerprint !== fingerprint) {
        throw new ApiError(
          'conflict',
          `Idempotency key '${scope.key}' was already used with a different request. Use a new key for a new request.`,
          { param: 'idempotency_key' },
        );
      }
      if (earlier.response_status === null || !earlier.resource_type || !earlier.resource_id) {
        throw new ApiError('conflict', `A request with idempotency key '${scope.key}' is still in flight.`, {
          param: 'idempotency_key',
        });
      }
      return {
        status: 200,
        resourceType: earlier.resource_type,
        resourceId: earlier.resource_id,
        replayed: true,
      };
    }
  }
  const outcome = await mutate();
  if (scope) await completeIdempotencyKey(tx, scope, outcome);
  return { ...outcome, replayed: false };
}
