import type { ServiceContext } from './context.ts';

/**
 * The time a merchant's objects live in: the service clock in live mode; in test mode the
 * service clock plus the merchant's test clock offset, which test_helpers/clock/advance moves.
 */
export function merchantNow(
  ctx: Pick<ServiceContext, 'clock'>,
  owner: { livemode: boolean; testClockOffsetMs: number },
): Date {
  const now = ctx.clock.now().getTime();
  return new Date(owner.livemode ? now : now + owner.testClockOffsetMs);
}
