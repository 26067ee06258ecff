import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { assertPostable, type Posting } from '../domain/ledger.ts';
import { type MoveOptions, type Plan, planMove } from '../domain/plan-move.ts';
import type { Action } from '../domain/state-machine.ts';
import type { Queryable } from '../store/db.ts';
import { insertEvents, type NewEvent } from '../store/events.ts';
import { cancelJobs, type JobKind, jobAbout, type NewJob, scheduleJobs } from '../store/jobs.ts';
import { insertLedgerRows, type LedgerRow } from '../store/ledger.ts';
import { type PayoutRunOwner, payoutRunSubject, schedulePayoutRuns } from '../store/payout-runs.ts';
import { type StateUpdate, updateStates } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { statusChangedEvent, transactionEvent } from './event-payloads.ts';

export interface MoveRequest {
  /** The transaction as locked in this database transaction. */
  row: TransactionRow;
  action: Action;
  /** On the transaction's clock (the merchant's test clock in test mode). */
  now: Date;
  /** Amounts and choices of the move (a partial release, a refund, a split). */
  options?: MoveOptions;
  paymentMethod?: Record<string, unknown>;
}

/** Pending work that a move makes pointless. */
const OBSOLETE_AFTER: Partial<Record<Action, JobKind[]>> = {
  capture: ['expire_payment'],
  cancel: ['expire_payment', 'time_release'],
  expire: ['expire_payment'],
  confirm: ['auto_release', 'time_release'],
  release: ['auto_release', 'time_release'],
  auto_release: ['auto_release', 'time_release'],
  time_release: ['auto_release', 'time_release'],
  refund: ['auto_release', 'time_release'],
  open_dispute: ['auto_release', 'time_release'],
};

const DAY_MS = 24 * 60 * 60 * 1000;

function followUpJobs(action: Action, after: TransactionRow, now: Date): NewJob[] {
  const job = (kind: JobKind, runAt: Date): NewJob => jobAbout(after, kind, runAt, now);
  const condition = after.release_condition;
  if (action === 'capture' && condition.type === 'time_based' && condition.release_at) {
    return [job('time_release', new Date(condition.release_at))];
  }
  if (action === 'deliver' && condition.type === 'buyer_confirmation' && after.review_deadline) {
    return [job('auto_release', after.review_deadline)];
  }
  if (action === 'capture' && after.customer?.email) return [job('send_buyer_link', now)];
  return [];
}

/** The journal rows of postings about one transaction (same merchant, environment, currency). */
export function journalRows(
  owner: Pick<TransactionRow, 'id' | 'merchant_id' | 'livemode' | 'currency'>,
  postings: readonly Posting[],
  at: Date,
): LedgerRow[] {
  return postings.map((posting) => {
    assertPostable(posting);
    return {
      id: newId('ledgerEntry', at.getTime()),
      merchant_id: owner.merchant_id,
      livemode: owner.livemode,
      currency: owner.currency,
      transaction_id: owner.id,
      kind: posting.kind,
      debit_account: posting.debit,
      credit_account: posting.credit,
      amount_minor: posting.amountMinor,
      created_at: at,
    };
  });
}

export interface AppliedMove {
  before: TransactionRow;
  after: TransactionRow;
  plan: Plan;
}

/**
 * Applies moves to locked transactions in one database transaction: guarded state updates, their
 * ledger postings, their outbox events and their follow-up jobs, each written in one statement
 * for the whole batch. With onInvalid 'skip' (the scheduler), a move the table no longer allows
 * is dropped; with 'throw' (an API call) it is a 409.
 */
export async function applyMoves(
  ctx: ServiceContext,
  tx: Queryable,
  requests: readonly MoveRequest[],
  onInvalid: 'throw' | 'skip',
): Promise<AppliedMove[]> {
  const planned: { request: MoveRequest; plan: Plan }[] = [];
  for (const request of requests) {
    try {
      planned.push({ request, plan: planMove(request.row, request.action, request.options) });
    } catch (error) {
      if (onInvalid === 'throw' || !(error instanceof ApiError)) throw error;
    }
  }
  if (planned.length === 0) return [];

  const updates: StateUpdate[] = planned.map(({ request: { row, action, now, paymentMethod }, plan }) => ({
    id: row.id,
    expected_status: row.status,
    expected_settlement_status: row.settlement_status,
    status: plan.status,
    settlement_status: plan.settlementStatus,
    amount_released_minor: plan.releasedMinor,
    amount_refunded_minor: plan.refundedMinor,
    amount_refunded_from_balance_minor: plan.refundedFromBalanceMinor,
    review_deadline:
      action === 'deliver'
        ? new Date(now.getTime() + row.release_condition.review_window_days * DAY_MS)
        : row.review_deadline,
    payment_method: (paymentMethod ?? row.payment_method) as Record<string, unknown> | null,
    updated_at: now,
  }));
  const changed = new Map((await updateStates(tx, updates)).map((r) => [r.id, r]));
  if (onInvalid === 'throw' && changed.size !== planned.length) {
    throw new ApiError(
      'conflict',
      'The transaction changed while this request ran; read it again and retry.',
    );
  }

  const applied: AppliedMove[] = [];
  const ledger: LedgerRow[] = [];
  const events: NewEvent[] = [];
  const jobs: NewJob[] = [];
  // Per action, the transactions whose pending work it made pointless: one statement per action
  // (a batch of auto-releases is one), deleting every obsolete kind of job of those transactions.
  const obsolete = new Map<Action, string[]>();
  // Merchants (and environments) with newly approved funds: their payout run is scheduled.
  const approvedOwners = new Map<string, PayoutRunOwner>();
  for (const { request, plan } of planned) {
    const after = changed.get(request.row.id);
    if (!after) continue;
    const before = request.row;
    const at = request.now;
    applied.push({ before, after, plan });
    ledger.push(...journalRows(after, plan.postings, at));
    if (plan.releasedMinor > before.amount_released_minor) {
      const owner = { merchantId: after.merchant_id, livemode: after.livemode, now: at };
      approvedOwners.set(payoutRunSubject(owner.merchantId, owner.livemode), owner);
    }
    if (after.status !== before.status) {
      events.push(statusChangedEvent(ctx, after, before.status, at));
      // Once per transaction: a failed refund that puts it back in reserved or released is no new payment.
      if (request.action === 'capture') events.push(transactionEvent(ctx, 'transaction.paid', after, at));
      if (request.action === 'payout_paid') {
        events.push(transactionEvent(ctx, 'transaction.completed', after, at));
      }
    }
    jobs.push(...followUpJobs(request.action, after, at));
    // A partial release (no move) leaves the rest held, so its deadlines still stand.
    if (plan.move && OBSOLETE_AFTER[request.action]) {
      const ids = obsolete.get(request.action);
      if (ids) ids.push(after.id);
      else obsolete.set(request.action, [after.id]);
    }
  }
  for (const [action, ids] of obsolete) await cancelJobs(tx, ids, OBSOLETE_AFTER[action] ?? []);
  await insertLedgerRows(tx, ledger);
  await insertEvents(tx, events);
  await scheduleJobs(tx, jobs);
  await schedulePayoutRuns(tx, [...approvedOwners.values()]);
  return applied;
}
