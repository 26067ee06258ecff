import { ALERT_INTERVAL_MS, urlOrigin } from '../domain/webhooks.ts';
import type { Queryable } from '../store/db.ts';
import { type NewJob, newJob } from '../store/jobs.ts';
import {
  clearFailingCallbackTargets,
  lockCallbackTarget,
  markCallbackTargetFailing,
} from '../store/webhook-callback-targets.ts';
import type { AttemptRecord, RecordedDelivery } from '../store/webhook-deliveries.ts';
import { scheduleJobsIfAbsent } from '../store/webhook-jobs.ts';

/**
 * Failing targets (resolutions 9): when a delivery's last attempt fails, its endpoint is flagged
 * `failing` and an alert job e-mails the merchant, at most once per endpoint per 24 hours (on the
 * merchant's clock); a later success clears the flag. A transaction's callback_url is handled the
 * same way per merchant, environment and URL origin (webhook_callback_targets).
 */

export interface AttemptOutcome extends AttemptRecord {
  eventId: string;
  merchantId: string;
  livemode: boolean;
  endpointId: string | null;
}

interface LockedEndpoint {
  id: string;
  failing: boolean;
  last_alert_at: Date | null;
}

/**
 * Locks, in id order, the endpoints whose state this batch may change: those a delivery finally
 * failed to, and failing ones a delivery succeeded to. Called before the deliveries are updated, so
 * the lock order (endpoint, then delivery) is the API's (disable and delete take the same order).
 */
export async function lockTargetsOf(
  tx: Queryable,
  outcomes: readonly AttemptOutcome[],
): Promise<Map<string, LockedEndpoint>> {
  const ids = new Set<string>();
  for (const o of outcomes) {
    if (o.endpointId && (o.status === 'failed' || o.status === 'succeeded')) ids.add(o.endpointId);
  }
  if (ids.size === 0) return new Map();
  const { rows } = await tx.query<LockedEndpoint>(
    `SELECT id, failing, last_alert_at FROM webhook_endpoints
      WHERE id = ANY($1::text[]) AND (failing OR id = ANY($2::text[]))
      ORDER BY id FOR NO KEY UPDATE`,
    [
      [...ids],
      outcomes.filter((o) => o.endpointId && o.status === 'failed').map((o) => o.endpointId as string),
    ],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

function alertDue(lastAlertAt: Date | null, at: Date): boolean {
  return lastAlertAt === null || at.getTime() - lastAlertAt.getTime() >= ALERT_INTERVAL_MS;
}

function failureSummary(o: AttemptRecord): string {
  if (o.error) return o.error;
  return `HTTP ${o.statusCode ?? 'no status'}`;
}

function alertJob(subject: string, o: AttemptOutcome, payload: Record<string, unknown>): NewJob {
  return newJob(
    {
      kind: 'webhook_alert',
      merchantId: o.merchantId,
      livemode: o.livemode,
      subjectId: subject,
      runAt: o.attemptedAt,
      payload: {
        ...payload,
        url: o.url,
        event_id: o.eventId,
        delivery_id: o.deliveryId,
        failed_at: o.attemptedAt.toISOString(),
        last_error: failureSummary(o),
      },
    },
    o.attemptedAt,
  );
}

/** Clears and sets failing flags for the attempts that were recorded, and schedules alerts. */
export async function updateTargetHealth(
  tx: Queryable,
  locked: Map<string, LockedEndpoint>,
  recorded: readonly RecordedDelivery[],
  records: readonly AttemptOutcome[],
): Promise<void> {
  const kept = new Set(recorded.map((r) => r.id));
  const outcomes = records.filter((o) => kept.has(o.deliveryId));
  const cleared: string[] = [];
  const clearedCallbacks: { merchant_id: string; livemode: boolean; origin: string }[] = [];
  const alerts: NewJob[] = [];
  for (const o of outcomes) {
    if (o.status === 'succeeded') {
      if (o.endpointId) {
        const endpoint = locked.get(o.endpointId);
        if (endpoint?.failing) {
          cleared.push(o.endpointId);
          endpoint.failing = false;
        }
      } else {
        clearedCallbacks.push({ merchant_id: o.merchantId, livemode: o.livemode, origin: urlOrigin(o.url) });
      }
      continue;
    }
    if (o.status !== 'failed') continue;
    if (o.endpointId) {
      const endpoint = locked.get(o.endpointId);
      if (!endpoint) continue;
      const alert = alertDue(endpoint.last_alert_at, o.attemptedAt);
      await tx.query(
        `UPDATE webhook_endpoints SET failing = true, failing_since = coalesce(failing_since, $2),
            last_alert_at = CASE WHEN $3 THEN $2 ELSE last_alert_at END
          WHERE id = $1`,
        [o.endpointId, o.attemptedAt, alert],
      );
      endpoint.failing = true;
      if (alert) {
        endpoint.last_alert_at = o.attemptedAt;
        alerts.push(
          alertJob(`alert:${o.endpointId}`, o, { target: 'webhook_endpoint', endpoint_id: o.endpointId }),
        );
      }
    } else {
      const owner = { merchantId: o.merchantId, livemode: o.livemode };
      const origin = urlOrigin(o.url);
      const target = await lockCallbackTarget(tx, owner, origin, o.attemptedAt);
      const alert = alertDue(target.last_alert_at, o.attemptedAt);
      await markCallbackTargetFailing(tx, owner, origin, {
        url: o.url,
        eventId: o.eventId,
        at: o.attemptedAt,
        alerted: alert,
      });
      if (alert) {
        alerts.push(
          alertJob(`alert:callback:${o.merchantId}:${o.livemode ? 'live' : 'test'}:${origin}`, o, {
            target: 'callback_url',
            origin,
          }),
        );
      }
    }
  }
  if (cleared.length > 0) {
    await tx.query(
      'UPDATE webhook_endpoints SET failing = false, failing_since = NULL WHERE id = ANY($1::text[]) AND failing',
      [cleared],
    );
  }
  if (clearedCallbacks.length > 0) {
    const at = outcomes.find((o) => o.status === 'succeeded')?.attemptedAt ?? new Date();
    await clearFailingCallbackTargets(tx, clearedCallbacks, at);
  }
  await scheduleJobsIfAbsent(tx, alerts);
}
