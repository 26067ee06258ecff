import { type Currency, toMajorUnits } from '../domain/money.ts';
import type { Queryable } from '../store/db.ts';
import { type EvidenceRow, evidenceOf } from '../store/dispute-evidence.ts';
import { type DisputeRow, findDispute } from '../store/disputes.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';

/** One piece of evidence as the API shows it (resolutions 8). */
export interface EvidenceView {
  id: string;
  submitted_by: EvidenceRow['submitted_by'];
  kind: EvidenceRow['kind'];
  /** The text or URL; for a file, the API path that downloads it. */
  content: string;
  /** Files only: the description sent with the file, else null. */
  description: string | null;
  file_name: string | null;
  content_type: string | null;
  size_bytes: number | null;
  submitted_at: string;
}

export interface DisputeOutcomeView {
  decision: NonNullable<DisputeRow['decision']>;
  amount_to_seller: number;
  amount_to_seller_minor: number;
  amount_to_buyer: number;
  amount_to_buyer_minor: number;
  decided_at: string;
  note: string | null;
}

/** A dispute as the API, its events and the pages show it (resolutions 8). */
export interface DisputeView {
  object: 'dispute';
  id: string;
  service_transaction_id: string;
  merchant_reference: string | null;
  merchant_order_id: string | null;
  status: DisputeRow['status'];
  reason: DisputeRow['reason'];
  description: string;
  opened_by: DisputeRow['opened_by'];
  /** The transaction's amount and currency. */
  amount: number;
  amount_minor: number;
  currency: string;
  evidence: EvidenceView[];
  evidence_due_by: string;
  outcome: DisputeOutcomeView | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

/** Where the API serves an evidence file (to the dispute's merchant and the operator). */
export const evidenceFilePath = (disputeId: string, evidenceId: string): string =>
  `/v1/disputes/${disputeId}/evidence/${evidenceId}/file`;

export function evidenceView(e: EvidenceRow): EvidenceView {
  const file = e.kind === 'file';
  return {
    id: e.id,
    submitted_by: e.submitted_by,
    kind: e.kind,
    content: file ? evidenceFilePath(e.dispute_id, e.id) : e.content,
    description: file && e.content !== '' ? e.content : null,
    file_name: e.file_name,
    content_type: e.content_type,
    size_bytes: e.size_bytes,
    submitted_at: e.submitted_at.toISOString(),
  };
}

type TransactionRefs = Pick<
  TransactionRow,
  'id' | 'merchant_reference' | 'merchant_order_id' | 'amount_minor' | 'currency'
>;

export function disputeView(
  d: DisputeRow,
  txn: TransactionRefs,
  evidence: readonly EvidenceRow[],
): DisputeView {
  const currency = txn.currency as Currency;
  const major = (minor: bigint | null) => toMajorUnits(minor ?? 0n, currency);
  return {
    object: 'dispute',
    id: d.id,
    service_transaction_id: d.transaction_id,
    merchant_reference: txn.merchant_reference,
    merchant_order_id: txn.merchant_order_id,
    status: d.status,
    reason: d.reason,
    description: d.description,
    opened_by: d.opened_by,
    amount: toMajorUnits(txn.amount_minor, currency),
    amount_minor: Number(txn.amount_minor),
    currency: txn.currency,
    evidence: evidence.filter((e) => e.dispute_id === d.id).map(evidenceView),
    evidence_due_by: d.evidence_due_by.toISOString(),
    outcome:
      d.decision === null || d.decided_at === null
        ? null
        : {
            decision: d.decision,
            amount_to_seller: major(d.amount_to_seller_minor),
            amount_to_seller_minor: Number(d.amount_to_seller_minor ?? 0n),
            amount_to_buyer: major(d.amount_to_buyer_minor),
            amount_to_buyer_minor: Number(d.amount_to_buyer_minor ?? 0n),
            decided_at: d.decided_at.toISOString(),
            note: d.note,
          },
    livemode: d.livemode,
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  };
}

/** Views of several disputes: their transactions and evidence in two statements. */
export async function disputeViews(q: Queryable, disputes: readonly DisputeRow[]): Promise<DisputeView[]> {
  if (disputes.length === 0) return [];
  const { rows: txns } = await q.query<TransactionRefs>(
    `SELECT id, merchant_reference, merchant_order_id, amount_minor, currency FROM transactions
      WHERE id = ANY($1::text[])`,
    [[...new Set(disputes.map((d) => d.transaction_id))]],
  );
  const byId = new Map(txns.map((t) => [t.id, t]));
  const evidence = await evidenceOf(
    q,
    disputes.map((d) => d.id),
  );
  return disputes.map((d) => {
    const txn = byId.get(d.transaction_id);
    if (!txn) throw new Error(`dispute ${d.id} has no transaction`);
    return disputeView(d, txn, evidence);
  });
}

/**
 * A dispute's view by id, whoever owns it: callers check the owner (a merchant key sees its own
 * environment's disputes, the operator every dispute, a buyer their transaction's).
 */
export async function loadDisputeView(
  ctx: Pick<ServiceContext, 'db'>,
  disputeId: string,
  q: Queryable = ctx.db,
): Promise<DisputeView | undefined> {
  const row = await findDispute(q, disputeId);
  if (!row) return undefined;
  const [view] = await disputeViews(q, [row]);
  return view;
}
