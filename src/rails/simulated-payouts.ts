import { randomBytes } from 'node:crypto';
import {
  destinationLast4,
  type PayoutInstruction,
  type PayoutRail,
  type PayoutResultReporter,
  type PayoutSubmission,
} from './payout.ts';

/**
 * The test environment's payout rails (mobile-money B2C and bank transfer): the instruction is
 * accepted at once and the result comes back later, as a real rail's callback would. The
 * destination's last four digits (phone or account number) choose the outcome; any other
 * destination is paid. The table is in docs/payouts.md.
 */
export const TEST_PAYOUT_FAILURES: Record<string, string> = {
  '0001': 'The destination account does not exist or cannot receive money (test destination ending 0001).',
  '0002': "The payout would exceed the recipient account's limit (test destination ending 0002).",
};

/** In test mode a merchant without payout settings is paid to this simulated M-Pesa number. */
export const SIMULATED_DEFAULT_PHONE = '+254700000000';

export class SimulatedPayouts implements PayoutRail {
  readonly name = 'payouts_simulated';
  private readonly report: PayoutResultReporter;
  private readonly delayMs: number;

  constructor(report: PayoutResultReporter, delayMs: number) {
    this.report = report;
    this.delayMs = delayMs;
  }

  async submit(instruction: PayoutInstruction): Promise<PayoutSubmission> {
    const prefix = instruction.destination.method === 'mobile_money' ? 'b2c' : 'bt';
    const railReference = `${prefix}_${randomBytes(8).toString('hex')}`;
    const reason = TEST_PAYOUT_FAILURES[destinationLast4(instruction.destination)];
    await this.report(
      instruction.payoutId,
      reason === undefined
        ? { outcome: 'paid', railReference }
        : { outcome: 'failed', reason, railReference },
      this.delayMs,
    );
    return { accepted: true, railReference };
  }
}
