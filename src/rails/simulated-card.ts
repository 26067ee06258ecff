import { randomBytes } from 'node:crypto';
import type { CollectionRail, CollectionRequest, CollectionResult, CollectionStart } from './collection.ts';

/** Test cards (resolutions 7); any other number is declined, as test mode takes test cards only. */
export const TEST_CARDS: Record<string, 'succeeds' | 'challenge' | { code: string; message: string }> = {
  '4242424242424242': 'succeeds',
  '4000000000000002': { code: 'card_declined', message: 'The card was declined.' },
  '4000000000009995': { code: 'insufficient_funds', message: 'The card has insufficient funds.' },
  '4000000000003220': 'challenge',
  // Pays, but its refunds fail (src/rails/simulated-refunds.ts).
  '4000000000005126': 'succeeds',
};

export class SimulatedCard implements CollectionRail {
  readonly name = 'card_simulated';

  async start(request: CollectionRequest): Promise<CollectionStart> {
    const railReference = `ch_${randomBytes(8).toString('hex')}`;
    const outcome = TEST_CARDS[request.cardNumber ?? ''];
    if (outcome === 'succeeds') return { status: 'succeeded', railReference };
    if (outcome === 'challenge') return { status: 'requires_action', railReference };
    if (outcome) return { status: 'failed', railReference, ...outcome };
    return {
      status: 'failed',
      railReference,
      code: 'card_declined',
      message: 'Test mode accepts only the test cards (for example 4242 4242 4242 4242).',
    };
  }

  completeChallenge(attemptId: string, approved: boolean): CollectionResult {
    return approved
      ? { attemptId, outcome: 'succeeded' }
      : {
          attemptId,
          outcome: 'failed',
          code: 'authentication_failed',
          message: '3-D Secure authentication failed.',
        };
  }
}
