import { randomBytes } from 'node:crypto';
import type { CollectionRail, CollectionRequest, CollectionResult, CollectionStart } from './collection.ts';

/**
 * Test-environment M-Pesa: the push is accepted at once, and the result comes back later as a
 * callback, like Daraja's. The phone's last four digits choose the outcome (resolutions 7),
 * after the M-Pesa result codes; 1037 (no response) sends no callback at all, so the attempt
 * ends by the service's own timeout, as with a real handset that never answers.
 */
export const TEST_PHONE_OUTCOMES: Record<string, { code: string; message: string } | 'no_callback'> = {
  '0001': {
    code: 'insufficient_funds',
    message: 'The balance is insufficient for the transaction (M-Pesa 1).',
  },
  '1032': {
    code: 'cancelled_by_user',
    message: 'The buyer cancelled the payment on the phone (M-Pesa 1032).',
  },
  '1037': 'no_callback',
  '2001': { code: 'wrong_pin', message: 'The PIN entered was wrong (M-Pesa 2001).' },
};

export type CallbackScheduler = (result: CollectionResult, delayMs: number) => Promise<void>;

export class SimulatedMobileMoney implements CollectionRail {
  readonly name = 'mpesa_simulated';
  private readonly scheduleCallback: CallbackScheduler;
  private readonly delayMs: number;

  constructor(scheduleCallback: CallbackScheduler, delayMs: number) {
    this.scheduleCallback = scheduleCallback;
    this.delayMs = delayMs;
  }

  async start(request: CollectionRequest): Promise<CollectionStart> {
    const railReference = `ws_CO_${randomBytes(8).toString('hex')}`;
    const outcome = TEST_PHONE_OUTCOMES[(request.phone ?? '').slice(-4)];
    if (outcome === 'no_callback') return { status: 'pending', railReference };
    await this.scheduleCallback(
      outcome
        ? { attemptId: request.attemptId, outcome: 'failed', code: outcome.code, message: outcome.message }
        : { attemptId: request.attemptId, outcome: 'succeeded', railReference },
      this.delayMs,
    );
    return { status: 'pending', railReference };
  }
}
