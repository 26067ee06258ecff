import { after, before } from 'node:test';
import { createOperatorKey } from '../../src/operations/manage-keys.ts';
import { type Harness, type HarnessOptions, startHarness } from './harness.ts';

export interface SuiteHarness extends Harness {
  /** The operator's API key, when the suite asked for one (`operatorKey: true`). */
  readonly operatorKey: string;
}

/**
 * The harness of the surrounding suite (a describe, or the whole file): started by a `before`
 * hook and closed by an `after` hook registered here. It stands for the started harness, so it
 * can be captured by helpers at definition time; its fields are only there once the hook ran.
 */
export function suiteHarness(options: HarnessOptions & { operatorKey?: boolean } = {}): SuiteHarness {
  let started: { h: Harness; operatorKey: string | undefined } | undefined;
  const current = () => {
    if (!started) throw new Error('the suite harness is used before its before hook ran');
    return started;
  };
  before(async () => {
    const h = await startHarness(options);
    started = { h, operatorKey: options.operatorKey ? (await createOperatorKey(h.ctx)).key : undefined };
  });
  after(() => current().h.close());
  return {
    get app() {
      return current().h.app;
    },
    get ctx() {
      return current().h.ctx;
    },
    get clock() {
      return current().h.clock;
    },
    get merchant() {
      return current().h.merchant;
    },
    get operatorKey() {
      const key = current().operatorKey;
      if (key === undefined) throw new Error('suiteHarness({ operatorKey: true }) makes the operator key');
      return key;
    },
    request: (request) => current().h.request(request),
    newMerchant: (merchant) => current().h.newMerchant(merchant),
    close: () => current().h.close(),
  };
}
