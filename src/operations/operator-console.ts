import { ApiError } from '../domain/errors.ts';
import { heldMinor } from '../domain/plan-move.ts';
import { findKey } from '../store/api-keys.ts';
import { findMerchant, type VerificationStatus } from '../store/merchants.ts';
import {
  type CaseLedgerRow,
  type CaseRefund,
  type CaseTransaction,
  type DisputeQueueFilter,
  disputeTransactionId,
  findCaseTransaction,
  type HistoryEntry,
  listDisputeQueue,
  listVerificationQueue,
  type QueuedDispute,
  type QueuedMerchant,
  transactionHistory,
  transactionLedger,
  transactionRefunds,
} from '../store/operator-queries.ts';
import { authenticate } from './authenticate.ts';
import type { ServiceContext } from './context.ts';
import { type DisputeView, loadDisputeView } from './dispute-view.ts';
import { setMerchantVerification } from './manage-merchants.ts';
import { merchantNow } from './merchant-clock.ts';

/**
 * The operator console's use cases: signing in with the operator's key, the two work queues
 * (undecided disputes, businesses awaiting verification) and the verification decision. The
 * dispute case itself is read and decided through the dispute operations.
 */

export interface SignedInOperator {
  keyId: string;
  /** The key's visible tail (sk_op_…abcd), to show who is signed in. */
  keyHint: string;
}

/** Checks a pasted key: it must be a valid operator key; merchant keys are refused by name. */
export async function signInOperator(ctx: ServiceContext, pastedKey: string): Promise<SignedInOperator> {
  const key = pastedKey.trim();
  if (!key) throw new ApiError('invalid_api_key', 'Paste the operator key (it starts with sk_op_).');
  const principal = await authenticate(ctx, `Bearer ${key}`);
  if (principal.kind !== 'operator') {
    throw new ApiError(
      'permission_denied',
      'This is a merchant key. The console is for the service operator: sign in with an sk_op_ key.',
    );
  }
  const operator = await activeOperatorKey(ctx, principal.keyId);
  if (!operator) throw new ApiError('invalid_api_key', 'Invalid API key.');
  return operator;
}

/** The operator key behind a session, if it is still an operator key that is neither revoked nor expired. */
export async function activeOperatorKey(
  ctx: ServiceContext,
  keyId: string,
): Promise<SignedInOperator | undefined> {
  const key = await findKey(ctx.db, keyId);
  if (key?.kind !== 'operator' || key.revoked_at) return undefined;
  if (key.expires_at && key.expires_at.getTime() <= ctx.clock.now().getTime()) return undefined;
  return { keyId: key.id, keyHint: key.key_hint };
}

export const QUEUE_PAGE_SIZE = 50;

export async function disputeQueue(
  ctx: ServiceContext,
  filter: Omit<DisputeQueueFilter, 'limit'>,
): Promise<{ rows: QueuedDispute[]; hasMore: boolean }> {
  return listDisputeQueue(ctx.db, { ...filter, limit: QUEUE_PAGE_SIZE }, ctx.clock.now());
}

export const VERIFICATION_PAGE_SIZE = 100;

export async function verificationQueue(
  ctx: ServiceContext,
): Promise<{ rows: QueuedMerchant[]; total: number }> {
  return listVerificationQueue(ctx.db, VERIFICATION_PAGE_SIZE);
}

export type VerificationDecision = Extract<VerificationStatus, 'verified' | 'rejected'>;

/**
 * Approves or rejects a business in the queue. A merchant already decided (by another operator,
 * or from a stale page) is a 409, so a stale "reject" cannot undo a verification.
 */
export async function decideVerification(
  ctx: ServiceContext,
  merchantId: string,
  decision: VerificationDecision,
): Promise<{ merchantId: string; name: string; status: VerificationDecision }> {
  const merchant = await findMerchant(ctx.db, merchantId);
  if (!merchant) throw new ApiError('not_found', `No such merchant: '${merchantId}'.`);
  if (merchant.verification_status !== 'unverified' && merchant.verification_status !== 'pending') {
    throw new ApiError(
      'conflict',
      `${merchant.name} is already ${merchant.verification_status}; the queue holds only undecided businesses.`,
    );
  }
  await setMerchantVerification(ctx, merchantId, decision);
  return { merchantId, name: merchant.name, status: decision };
}

/** Everything the case page shows: the dispute, its transaction, that transaction's events and journal. */
export interface DisputeCase {
  dispute: DisputeView;
  transaction: CaseTransaction;
  history: HistoryEntry[];
  ledger: CaseLedgerRow[];
  refunds: CaseRefund[];
  /** Still held in escrow: what a decision divides. */
  heldMinor: bigint;
  /** The dispute's merchant clock (the test clock in test mode), for "overdue". */
  now: Date;
  /** Undecided, or decided for the buyer with the refund refused by the rail: the form is offered. */
  decidable: boolean;
  /** The second case: the transaction is back under review after a refused refund. */
  refundRefused: boolean;
}

/** The history shown is capped; a transaction has a few dozen events at most in practice. */
const HISTORY_LIMIT = 500;

export async function loadCase(ctx: ServiceContext, disputeId: string): Promise<DisputeCase | undefined> {
  const transactionId = await disputeTransactionId(ctx.db, disputeId);
  if (!transactionId) return undefined;
  const [dispute, transaction, history, ledger, refunds] = await Promise.all([
    loadDisputeView(ctx, disputeId),
    findCaseTransaction(ctx.db, transactionId),
    transactionHistory(ctx.db, transactionId, HISTORY_LIMIT),
    transactionLedger(ctx.db, transactionId),
    transactionRefunds(ctx.db, transactionId),
  ]);
  if (!dispute || !transaction) return undefined;
  const now = merchantNow(ctx, {
    livemode: transaction.livemode,
    testClockOffsetMs: Number(transaction.test_clock_offset_ms),
  });
  // Mirrors resolveDispute's rule for deciding again (it re-checks under its locks).
  const refundRefused =
    dispute.status === 'resolved' &&
    transaction.status === 'under_review' &&
    refunds.some((r) => r.dispute_id === dispute.id && r.status === 'failed');
  const decidable = dispute.status === 'open' || dispute.status === 'under_review' || refundRefused;
  return {
    dispute,
    transaction,
    history,
    ledger,
    refunds,
    heldMinor: heldMinor(transaction),
    now,
    decidable,
    refundRefused,
  };
}
