import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { CollectionMethod, CollectionRail } from '../rails/collection.ts';
import { SimulatedCard } from '../rails/simulated-card.ts';
import { SimulatedMobileMoney } from '../rails/simulated-mobile-money.ts';
import { scheduleJobs } from '../store/jobs.ts';
import type { ServiceContext } from './context.ts';

const DEFAULT_SIMULATOR_DELAY_MS = 3000;

/**
 * The rail for a payment. Test mode uses the simulators; a simulated callback is a scheduled job
 * on the merchant's clock, delivered by the worker like a rail's HTTP callback would be.
 * Live collection needs a real rail adapter, which this server does not have configured.
 */
export function collectionRail(
  ctx: ServiceContext,
  method: CollectionMethod,
  owner: { merchantId: string; livemode: boolean; now: Date },
): CollectionRail {
  if (owner.livemode) {
    throw new ApiError(
      'invalid_request',
      'No live payment rail is configured on this server; use test mode.',
      {
        param: 'method',
      },
    );
  }
  if (method === 'card') return new SimulatedCard();
  return new SimulatedMobileMoney(
    async (result, delayMs) =>
      scheduleJobs(ctx.db, [
        {
          id: newId('job', owner.now.getTime()),
          kind: 'rail_callback',
          merchant_id: owner.merchantId,
          livemode: owner.livemode,
          subject_id: result.attemptId,
          run_at: new Date(owner.now.getTime() + delayMs),
          payload: result,
          created_at: owner.now,
        },
      ]),
    ctx.simulatorDelayMs ?? DEFAULT_SIMULATOR_DELAY_MS,
  );
}
