import type { CallbackTargetView } from '../schemas/webhooks.ts';
import { listCallbackTargets } from '../store/webhook-callback-targets.ts';
import type { ServiceContext } from './context.ts';
import type { MerchantPrincipal } from './principal.ts';
import { webhookSettings } from './webhook-settings.ts';

/** GET /v1/webhook_callback_targets: the failing state of the environment's callback URLs, per origin. */
export async function listCallbackTargetViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
): Promise<{ object: 'list'; data: CallbackTargetView[]; has_more: boolean }> {
  const rows = await listCallbackTargets(ctx.db, {
    merchantId: merchant.merchantId,
    livemode: merchant.livemode,
  });
  return {
    object: 'list',
    has_more: false,
    data: rows.map((r) => ({
      object: 'callback_target',
      origin: r.origin,
      failing: r.failing,
      failing_since: r.failing_since?.toISOString() ?? null,
      last_alert_at: r.last_alert_at?.toISOString() ?? null,
      last_failed_url: r.last_failed_url,
      last_failed_event_id: r.last_failed_event_id,
      livemode: r.livemode,
      updated_at: r.updated_at.toISOString(),
    })),
  };
}

/** GET /v1/webhook_egress_ranges: where webhooks come from (WEBHOOK_EGRESS_RANGES). */
export function egressRanges(ctx: ServiceContext): { object: 'webhook_egress_ranges'; ranges: string[] } {
  return { object: 'webhook_egress_ranges', ranges: [...webhookSettings(ctx).egressRanges] };
}
