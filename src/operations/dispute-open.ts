import { requestFingerprint } from '../domain/canonical-json.ts';
import { ApiError, invalid } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { type CreateDisputeInput, DISPUTE_REASONS } from '../schemas/disputes.ts';
import type { Queryable } from '../store/db.ts';
import { isUniqueViolation } from '../store/db.ts';
import { insertEvidence } from '../store/dispute-evidence.ts';
import { type DisputeParty, type DisputeReason, type DisputeRow, insertDispute } from '../store/disputes.ts';
import { insertEvents } from '../store/events.ts';
import { newJob, scheduleJobs } from '../store/jobs.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { applyMoves } from './apply-moves.ts';
import type { ServiceContext } from './context.ts';
import { checkEvidenceLimits, checkText, type EvidenceInput, prepareEvidence } from './dispute-evidence.ts';
import { type DisputeView, loadDisputeView } from './dispute-view.ts';
import { objectEvent, refsOf } from './event-payloads.ts';
import { idempotencyKeyOf, runIdempotent } from './idempotent.ts';
import { merchantNow } from './merchant-clock.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';

/** How long the parties have to send evidence before the case goes under review (resolutions 8). */
export const EVIDENCE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export interface OpenDispute {
  reason: string;
  description: string;
  evidence?: readonly EvidenceInput[];
}

export function isDisputeReason(value: string): value is DisputeReason {
  return (DISPUTE_REASONS as readonly string[]).includes(value);
}

/**
 * Opens a dispute on a transaction locked in this database transaction: the state machine's
 * open_dispute move (reserved or delivered → disputed; it also cancels the auto-release), the
 * dispute and its first evidence, the evidence deadline job, and dispute.opened after the
 * transaction.status_changed that applyMoves writes. Anything but reserved or delivered is 409.
 */
export async function openDisputeOn(
  ctx: ServiceContext,
  tx: Queryable,
  row: TransactionRow,
  openedBy: DisputeParty,
  input: OpenDispute,
  now: Date,
): Promise<DisputeRow> {
  if (!isDisputeReason(input.reason)) {
    throw invalid('reason', `reason must be one of: ${DISPUTE_REASONS.join(', ')}.`);
  }
  const description = checkText(input.description, 'description', 5000);
  const id = newId('dispute', now.getTime());
  const evidence = (input.evidence ?? []).map((e, i) =>
    prepareEvidence(e, id, openedBy, now, `evidence.${i}.content`),
  );
  const [applied] = await applyMoves(ctx, tx, [{ row, action: 'open_dispute', now }], 'throw');
  if (!applied) throw new Error('a thrown move cannot be skipped');
  const dispute: DisputeRow = {
    id,
    transaction_id: row.id,
    merchant_id: row.merchant_id,
    livemode: row.livemode,
    status: 'open',
    reason: input.reason,
    description,
    opened_by: openedBy,
    evidence_due_by: new Date(now.getTime() + EVIDENCE_WINDOW_MS),
    decision: null,
    amount_to_seller_minor: null,
    amount_to_buyer_minor: null,
    decided_at: null,
    note: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await insertDispute(tx, dispute);
  } catch (error) {
    // The state machine already refuses a second dispute; the index is the last guard.
    if (isUniqueViolation(error, 'disputes_one_active')) {
      throw new ApiError('conflict', 'This transaction already has an open dispute.');
    }
    throw error;
  }
  await checkEvidenceLimits(tx, id, evidence);
  await insertEvidence(tx, evidence);
  await scheduleJobs(tx, [
    newJob(
      {
        kind: 'dispute_deadline',
        merchantId: row.merchant_id,
        livemode: row.livemode,
        subjectId: id,
        runAt: dispute.evidence_due_by,
      },
      now,
    ),
  ]);
  const view = await loadDisputeView(ctx, id, tx);
  if (!view) throw new Error(`dispute ${id} vanished`);
  await insertEvents(tx, [objectEvent('dispute.opened', refsOf(applied.after), view, now)]);
  return dispute;
}

/**
 * POST /v1/disputes: the merchant opens a dispute on its transaction (opened_by seller). One
 * database transaction under the idempotency key; 201, or 200 replaying the first answer.
 */
export async function createDispute(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  input: CreateDisputeInput,
  headerKey: string | undefined,
): Promise<{ dispute: DisputeView; replayed: boolean }> {
  const key = idempotencyKeyOf(headerKey, input.idempotency_key);
  const owner = ownerOf(merchant);
  const now = merchantNow(ctx, merchant);
  const outcome = await ctx.db.transaction((tx) =>
    runIdempotent(
      tx,
      { owner, key, operation: 'POST /v1/disputes', fingerprint: requestFingerprint(input), now },
      async () => {
        const [row] = await lockTransactions(tx, [input.service_transaction_id]);
        if (!row || row.merchant_id !== owner.merchantId || row.livemode !== owner.livemode) {
          throw new ApiError('not_found', `No such transaction: '${input.service_transaction_id}'.`, {
            param: 'service_transaction_id',
          });
        }
        const dispute = await openDisputeOn(ctx, tx, row, 'seller', input, now);
        return { status: 201, resourceType: 'dispute', resourceId: dispute.id };
      },
    ),
  );
  const dispute = await loadDisputeView(ctx, outcome.resourceId);
  if (!dispute) throw new Error(`dispute ${outcome.resourceId} vanished`);
  return { dispute, replayed: outcome.replayed };
}
