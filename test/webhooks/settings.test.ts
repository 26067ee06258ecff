import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_EGRESS_RANGES, loadConfig } from '../../src/config.ts';
import { webhookSettingsFrom } from '../../src/operations/webhook-settings.ts';

describe('webhook settings from the environment', () => {
  it('defaults to a 10 s timeout and the two documentation ranges', () => {
    const settings = webhookSettingsFrom(loadConfig({}));
    assert.equal(settings.timeoutMs, 10_000);
    assert.deepEqual(settings.egressRanges, DEFAULT_EGRESS_RANGES);
    assert.deepEqual(DEFAULT_EGRESS_RANGES, ['192.0.2.0/24', '198.51.100.0/24']);
  });

  it('reads WEBHOOK_* variables, CIDR lists included', () => {
    const settings = webhookSettingsFrom(
      loadConfig({
        WEBHOOK_TIMEOUT_MS: '2500',
        WEBHOOK_CONCURRENCY: '10',
        WEBHOOK_CONCURRENCY_PER_ENDPOINT: '3',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_EGRESS_RANGES: ' 203.0.113.0/24 , 2001:db8::/32',
      }),
    );
    assert.deepEqual(settings, {
      timeoutMs: 2500,
      concurrency: 10,
      perEndpoint: 3,
      pollMs: 50,
      egressRanges: ['203.0.113.0/24', '2001:db8::/32'],
    });
  });

  it('stops at start on a malformed range or number, naming the variable', () => {
    for (const bad of ['203.0.113.0', '203.0.113.0/33', 'example.com/24', '10.0.0.0/8/1', '::/129']) {
      assert.throws(() => loadConfig({ WEBHOOK_EGRESS_RANGES: bad }), /WEBHOOK_EGRESS_RANGES/);
    }
    assert.throws(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '0' }), /WEBHOOK_TIMEOUT_MS/);
  });
});
