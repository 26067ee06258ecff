import { createHash } from 'node:crypto';
import { requestFingerprint } from '../domain/canonical-json.ts';
import { invalid, notFound } from '../domain/errors.ts';
import type { ListDisputesFilter } from '../schemas/disputes.ts';
import type { EvidenceFile } from '../store/dispute-evidence.ts';
import { type DisputeRow, findDispute, listDisputes } from '../store/disputes.ts';
import type { ServiceContext } from './context.ts';
import { addEvidenceIn, type EvidenceInput, readEvidenceFile } from './dispute-evidence.ts';
import { operatorKey } from './dispute-resolve.ts';
import { type DisputeView, disputeViews, loadDisputeView } from './dispute-view.ts';
import { runIdempotent } from './idempotent.ts';
import { type ListView, listView, pageFilterOf } from './list-view.ts';
import type { Principal } from './principal.ts';

/**
 * The dispute API's reads and evidence for its two callers: a merchant key sees its own
 * environment's disputes (anything else is 404), the operator's key every dispute.
 */

function visibleTo(principal: Principal, dispute: DisputeRow): boolean {
  return (
    principal.kind === 'operator' ||
    (dispute.merchant_id === principal.merchantId && dispute.livemode === principal.livemode)
  );
}

async function visibleDispute(ctx: ServiceContext, principal: Principal, id: string): Promise<DisputeRow> {
  const dispute = await findDispute(ctx.db, id);
  if (!dispute || !visibleTo(principal, dispute)) throw notFound('dispute', id);
  return dispute;
}

export async function getDispute(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
): Promise<DisputeView> {
  await visibleDispute(ctx, principal, id);
  const view = await loadDisputeView(ctx, id);
  if (!view) throw notFound('dispute', id);
  return view;
}

/**
 * Newest first. A merchant key lists its own environment's disputes; the operator's key lists
 * every merchant's, in both environments, narrowed by merchant_id and livemode if it asks.
 */
export async function listDisputeViews(
  ctx: ServiceContext,
  principal: Principal,
  filter: ListDisputesFilter,
): Promise<ListView<DisputeView>> {
  const page = pageFilterOf(filter);
  if (principal.kind === 'merchant') {
    for (const param of ['merchant_id', 'livemode'] as const) {
      if (filter[param] !== undefined) {
        throw invalid(
          param,
          `${param} is a filter of the operator's key; a merchant key lists its own disputes.`,
        );
      }
    }
  }
  const owner =
    principal.kind === 'merchant'
      ? { merchantId: principal.merchantId, livemode: principal.livemode }
      : { merchantId: filter.merchant_id, livemode: filter.livemode };
  const { rows, hasMore } = await listDisputes(ctx.db, {
    ...owner,
    status: filter.status,
    transactionId: filter.service_transaction_id,
    ...page,
  });
  return listView(await disputeViews(ctx.db, rows), hasMore);
}

/** What idempotency compares for an upload: the file by its hash, not its bytes. */
function evidenceFingerprint(evidence: EvidenceInput): string {
  if (evidence.kind !== 'file') return requestFingerprint(evidence);
  return requestFingerprint({
    kind: 'file',
    file_name: evidence.fileName,
    sha256: createHash('sha256').update(evidence.data).digest('hex'),
    description: evidence.description,
  });
}

/**
 * POST /v1/disputes/{id}/evidence: the merchant's key adds the seller's evidence, the operator's
 * key the operator's, in one database transaction under the idempotency key (scoped by the
 * dispute's merchant and environment; the operator's keys in their own namespace).
 */
export async function submitEvidence(
  ctx: ServiceContext,
  principal: Principal,
  disputeId: string,
  evidence: EvidenceInput,
  key: string | undefined,
): Promise<{ dispute: DisputeView; replayed: boolean }> {
  const dispute = await visibleDispute(ctx, principal, disputeId);
  const owner = { merchantId: dispute.merchant_id, livemode: dispute.livemode };
  const scopedKey = key !== undefined && principal.kind === 'operator' ? operatorKey(key) : key;
  const outcome = await ctx.db.transaction(async (tx) =>
    runIdempotent(
      tx,
      {
        owner,
        key: scopedKey,
        operation: `POST /v1/disputes/${disputeId}/evidence`,
        fingerprint: evidenceFingerprint(evidence),
        now: ctx.clock.now(),
      },
      async () => {
        const by = principal.kind === 'operator' ? 'operator' : 'seller';
        await addEvidenceIn(ctx, tx, disputeId, by, evidence);
        return { status: 200, resourceType: 'dispute', resourceId: disputeId };
      },
    ),
  );
  const view = await loadDisputeView(ctx, outcome.resourceId);
  if (!view) throw notFound('dispute', disputeId);
  return { dispute: view, replayed: outcome.replayed };
}

/** An evidence file for the dispute's merchant (same environment) or the operator; else 404. */
export async function evidenceFileFor(
  ctx: ServiceContext,
  principal: Principal,
  disputeId: string,
  evidenceId: string,
): Promise<EvidenceFile> {
  const found = await readEvidenceFile(ctx, disputeId, evidenceId);
  if (!found || !visibleTo(principal, found.dispute)) throw notFound('evidence file', evidenceId);
  return found.file;
}
