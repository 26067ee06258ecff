import type { Scope } from '../domain/api-keys.ts';
import { ApiError } from '../domain/errors.ts';
import type { MerchantPrincipal, OperatorPrincipal, Principal } from './principal.ts';

/**
 * A merchant route's gate, after authentication: live keys need a verified business (403
 * permission_denied), and the key must carry the route's scope (403 insufficient_permissions).
 */
export function requireMerchant(principal: Principal, scope: Scope): MerchantPrincipal {
  if (principal.kind !== 'merchant') {
    throw new ApiError('permission_denied', 'Operator keys cannot act for a merchant; use a merchant key.');
  }
  if (principal.livemode && principal.verificationStatus !== 'verified') {
    throw new ApiError(
      'permission_denied',
      'Live mode needs completed business verification. Use your sk_test_ key until the operator verifies your business.',
    );
  }
  if (!principal.scopes.includes(scope)) {
    throw new ApiError('insufficient_permissions', `This API key lacks the '${scope}' scope.`);
  }
  return principal;
}

export function requireOperator(principal: Principal): OperatorPrincipal {
  if (principal.kind !== 'operator') {
    throw new ApiError('permission_denied', 'Only the service operator may do this (use an sk_op_ key).');
  }
  return principal;
}
