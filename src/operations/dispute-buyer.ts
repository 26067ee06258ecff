import { ApiError } from '../domain/errors.ts';
import { tokenHash } from '../domain/link-tokens.ts';
import { findTransactionByBuyerTokenHash } from '../store/buyer-links.ts';
import type { Queryable } from '../store/db.ts';
import type { EvidenceFile } from '../store/dispute-evidence.ts';
import { disputesOfTransaction } from '../store/disputes.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import { lockTransactions } from '../store/transaction-state.ts';
import type { TransactionRow } from '../store/transactions.ts';
import { isWellFormedToken } from './checkout.ts';
import type { ServiceContext } from './context.ts';
import { addEvidence, type EvidenceInput, readEvidenceFile } from './dispute-evidence.ts';
import { openDisputeOn } from './dispute-open.ts';
import { type DisputeView, loadDisputeView } from './dispute-view.ts';
import { merchantNow } from './merchant-clock.ts';

/**
 * The buyer's side of a dispute, on the buyer page (the buyer token is the credential): open
 * one on a held purchase, add evidence while it is open, and download the files of their own
 * transaction's disputes. Everything the buyer sends is submitted_by buyer.
 */

function badToken(): ApiError {
  return new ApiError('authentication_failed', 'This buyer link is not valid.');
}

async function transactionOfToken(q: Queryable, token: string): Promise<TransactionRow> {
  if (!isWellFormedToken(token)) throw badToken();
  const row = await findTransactionByBuyerTokenHash(q, tokenHash(token));
  if (!row) throw badToken();
  return row;
}

/** The latest dispute of the buyer's transaction (open or decided), or null. */
export async function loadBuyerDispute(ctx: ServiceContext, token: string): Promise<DisputeView | null> {
  if (!isWellFormedToken(token)) return null;
  const row = await findTransactionByBuyerTokenHash(ctx.db, tokenHash(token));
  if (!row) return null;
  const [latest] = await disputesOfTransaction(ctx.db, row.id);
  return latest ? ((await loadDisputeView(ctx, latest.id)) ?? null) : null;
}

export interface BuyerDisputeInput {
  reason: string;
  description: string;
  /** A photo or document sent with the report. */
  file?: { fileName: string; data: Uint8Array };
}

/** The buyer opens a dispute (opened_by buyer): the same move and checks as POST /v1/disputes. */
export async function openDisputeAsBuyer(
  ctx: ServiceContext,
  token: string,
  input: BuyerDisputeInput,
): Promise<DisputeView> {
  const hash = isWellFormedToken(token) ? tokenHash(token) : undefined;
  if (!hash) throw badToken();
  const id = await ctx.db.transaction(async (tx) => {
    const found = await findTransactionByBuyerTokenHash(tx, hash);
    if (!found) throw badToken();
    const [row] = await lockTransactions(tx, [found.id]);
    if (!row) throw badToken();
    const offset = await findMerchantClock(tx, row.merchant_id);
    const now = merchantNow(ctx, { livemode: row.livemode, testClockOffsetMs: offset });
    const evidence: EvidenceInput[] = input.file
      ? [{ kind: 'file', fileName: input.file.fileName, data: input.file.data }]
      : [];
    const dispute = await openDisputeOn(
      ctx,
      tx,
      row,
      'buyer',
      { reason: input.reason, description: input.description, evidence },
      now,
    );
    return dispute.id;
  });
  const view = await loadDisputeView(ctx, id);
  if (!view) throw new Error(`dispute ${id} vanished`);
  return view;
}

/** The buyer adds evidence to their transaction's undecided dispute (409 if none is open). */
export async function addBuyerEvidence(
  ctx: ServiceContext,
  token: string,
  evidence: EvidenceInput,
): Promise<DisputeView> {
  const row = await transactionOfToken(ctx.db, token);
  const [latest] = await disputesOfTransaction(ctx.db, row.id);
  if (!latest) throw new ApiError('conflict', 'There is no dispute about this purchase to add evidence to.');
  return addEvidence(ctx, latest.id, 'buyer', evidence);
}

/** A file of one of the buyer's transaction's disputes, else undefined (never another's). */
export async function readBuyerEvidenceFile(
  ctx: ServiceContext,
  token: string,
  evidenceId: string,
): Promise<EvidenceFile | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const row = await findTransactionByBuyerTokenHash(ctx.db, tokenHash(token));
  if (!row) return undefined;
  for (const dispute of await disputesOfTransaction(ctx.db, row.id)) {
    const found = await readEvidenceFile(ctx, dispute.id, evidenceId);
    if (found && found.dispute.transaction_id === row.id) return found.file;
  }
  return undefined;
}
