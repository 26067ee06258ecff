import type { Scope } from '../domain/api-keys.ts';
import type { VerificationStatus } from '../store/merchants.ts';

/** Who is calling: a merchant key (test or live) or the service operator. */
export type Principal = MerchantPrincipal | OperatorPrincipal;

export interface MerchantPrincipal {
  kind: 'merchant';
  keyId: string;
  merchantId: string;
  livemode: boolean;
  scopes: readonly Scope[];
  defaultCurrency: string;
  verificationStatus: VerificationStatus;
  rateLimitPerMinute: number | null;
  /** How far the merchant's test clock is ahead of the system clock (test mode only). */
  testClockOffsetMs: number;
}

export interface OperatorPrincipal {
  kind: 'operator';
  keyId: string;
}

/** The merchant environment a merchant key acts on: what its objects are scoped by. */
export function ownerOf(merchant: MerchantPrincipal): { merchantId: string; livemode: boolean } {
  return { merchantId: merchant.merchantId, livemode: merchant.livemode };
}
