import { ApiError } from '../domain/errors.ts';
import type { CollectionMethod, CollectionRail } from '../rails/collection.ts';
import { type DarajaConfig, MpesaDaraja } from '../rails/mpesa-daraja.ts';
import { SimulatedCard } from '../rails/simulated-card.ts';
import { SimulatedMobileMoney } from '../rails/simulated-mobile-money.ts';
import { newJob, scheduleJobs } from '../store/jobs.ts';
import type { ServiceContext } from './context.ts';
import { mpesaCallbackUrl } from './mpesa-callbacks.ts';

const DEFAULT_SIMULATOR_DELAY_MS = 3000;

/** One Daraja client per configuration, so its access token is shared by every payment. */
const darajaClients = new WeakMap<DarajaConfig, MpesaDaraja>();

function daraja(ctx: ServiceContext, config: DarajaConfig): MpesaDaraja {
  let client = darajaClients.get(config);
  if (!client) {
    client = new MpesaDaraja({ config, callbackUrl: mpesaCallbackUrl(ctx), clock: ctx.clock });
    darajaClients.set(config, client);
  }
  return client;
}

/**
 * The rail for a payment. Test mode uses the simulators; a simulated callback is a scheduled job
 * on the merchant's clock, delivered by the worker like a rail's HTTP callback would be.
 * Live mobile money uses M-Pesa Daraja when MPESA_* is configured; live cards need a card
 * processor adapter, which does not exist yet, so they are refused.
 */
export function collectionRail(
  ctx: ServiceContext,
  method: CollectionMethod,
  owner: { merchantId: string; livemode: boolean; now: Date },
): CollectionRail {
  if (owner.livemode && method === 'mobile_money' && ctx.mpesa) return daraja(ctx, ctx.mpesa);
  if (owner.livemode && ctx.mpesa) {
    throw new ApiError(
      'invalid_request',
      'Card payments are not available in live mode yet; pay by M-Pesa.',
      {
        param: 'method',
      },
    );
  }
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
        newJob(
          {
            kind: 'rail_callback',
            merchantId: owner.merchantId,
            livemode: owner.livemode,
            subjectId: result.attemptId,
            runAt: new Date(owner.now.getTime() + delayMs),
            payload: result,
          },
          owner.now,
        ),
      ]),
    ctx.simulatorDelayMs ?? DEFAULT_SIMULATOR_DELAY_MS,
  );
}
