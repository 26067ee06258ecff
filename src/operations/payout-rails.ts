import type { PayoutDestination, PayoutRail, PayoutSubmission } from '../rails/payout.ts';
import { SIMULATED_DEFAULT_PHONE, SimulatedPayouts } from '../rails/simulated-payouts.ts';
import type { Queryable } from '../store/db.ts';
import { newJob, scheduleJobs } from '../store/jobs.ts';
import type { PayoutSettingsRow } from '../store/payout-settings.ts';

/**
 * The simulated rails report at once: the result is still its own job (its own database
 * transaction, like a rail's callback), which the worker or the test clock runs next.
 */
const SIMULATED_RESULT_DELAY_MS = 0;

export const NO_LIVE_PAYOUT_RAIL =
  'No live payout rail is configured on this server; the payout stays pending until one is.';

/**
 * Live mode: no payout rail (M-Pesa B2C, a bank's transfer API) is wired in yet. The rail takes
 * nothing, so a live payout stays pending rather than being marked paid without money moving.
 */
const unavailableLiveRail: PayoutRail = {
  name: 'payouts_live_unavailable',
  async submit(): Promise<PayoutSubmission> {
    return { accepted: false, reason: NO_LIVE_PAYOUT_RAIL };
  },
};

/**
 * Where an environment's payouts go: its saved method, or in test mode the simulated M-Pesa
 * number (so the flow works out of the box); null in live mode until a method is saved.
 */
export function payoutDestination(
  settings: PayoutSettingsRow | undefined,
  livemode: boolean,
): PayoutDestination | null {
  if (!settings) return livemode ? null : { method: 'mobile_money', phone: SIMULATED_DEFAULT_PHONE };
  if (settings.method === 'mobile_money' && settings.phone)
    return { method: 'mobile_money', phone: settings.phone };
  if (settings.method === 'bank_transfer' && settings.bank_code && settings.account_number) {
    return {
      method: 'bank_transfer',
      bank_code: settings.bank_code,
      account_number: settings.account_number,
    };
  }
  throw new Error(`payout settings of ${settings.merchant_id} are incomplete`);
}

/**
 * The rail for an environment's payouts. In test mode the simulators, whose result is a
 * payout_settle job written in the caller's database transaction (so it exists only if the
 * payout does); in live mode none yet.
 */
export function payoutRail(
  tx: Queryable,
  owner: { merchantId: string; livemode: boolean; now: Date },
): PayoutRail {
  if (owner.livemode) return unavailableLiveRail;
  return new SimulatedPayouts(
    async (payoutId, result, delayMs) =>
      scheduleJobs(tx, [
        newJob(
          {
            kind: 'payout_settle',
            merchantId: owner.merchantId,
            livemode: owner.livemode,
            subjectId: payoutId,
            runAt: new Date(owner.now.getTime() + delayMs),
            payload: result,
          },
          owner.now,
        ),
      ]),
    SIMULATED_RESULT_DELAY_MS,
  );
}
