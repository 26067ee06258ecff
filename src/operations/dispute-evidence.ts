import { ApiError, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { MULTILINE_PATTERN } from '../schemas/disputes.ts';
import type { Queryable } from '../store/db.ts';
import {
  countEvidence,
  type EvidenceFile,
  findEvidenceFile,
  insertEvidence,
  type NewEvidence,
} from '../store/dispute-evidence.ts';
import {
  type DisputeParty,
  type DisputeRow,
  findDispute,
  lockDispute,
  touchDispute,
} from '../store/disputes.ts';
import { insertEvents } from '../store/events.ts';
import { findMerchantClock } from '../store/merchant-clock.ts';
import { findTransaction } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { detectFileType, MAX_EVIDENCE_FILE_BYTES, safeFileName } from './dispute-file-types.ts';
import { type DisputeView, loadDisputeView } from './dispute-view.ts';
import { objectEvent, refsOf } from './event-payloads.ts';
import { merchantNow } from './merchant-clock.ts';

/** Evidence as a party gives it: text, a URL, or a file (bytes as uploaded, type not yet known). */
export type EvidenceInput =
  | { kind: 'text' | 'url'; content: string }
  | { kind: 'file'; fileName: string; data: Uint8Array; description?: string };

export const MAX_TEXT_CHARS = 5000;
export const MAX_URL_CHARS = 2048;
/** Per dispute, so one case cannot fill the database. */
export const MAX_EVIDENCE_ITEMS = 100;
export const MAX_EVIDENCE_FILES = 20;

const MULTILINE = new RegExp(MULTILINE_PATTERN, 'u');

/** Checks free text the way the API schemas do, for callers that are not the API (pages). */
export function checkText(value: string, param: string, max: number): string {
  if (value.trim() === '') throw invalid(param, `${param} must not be empty.`);
  if ([...value].length > max) throw invalid(param, `${param} must be at most ${max} characters.`);
  if (!MULTILINE.test(value)) {
    throw invalid(param, `${param} must not contain control characters other than line breaks and tabs.`);
  }
  return value;
}

function checkUrl(value: string, param: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw invalid(param, `${param} must be an absolute http or https URL.`);
  }
  if (value.length > MAX_URL_CHARS) {
    throw invalid(param, `${param} must be a URL of at most ${MAX_URL_CHARS} characters.`);
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid(param, `${param} must not carry a user name or password.`);
  }
  return value;
}

/** Validates one piece of evidence and makes its row (file type sniffed from the bytes). */
export function prepareEvidence(
  input: EvidenceInput,
  disputeId: string,
  submittedBy: DisputeParty,
  at: Date,
  param = 'content',
): NewEvidence {
  const base = {
    id: newId('evidence', at.getTime()),
    dispute_id: disputeId,
    submitted_by: submittedBy,
    submitted_at: at,
  };
  if (input.kind !== 'file') {
    const content =
      input.kind === 'text'
        ? checkText(input.content, param, MAX_TEXT_CHARS)
        : checkUrl(input.content, param);
    return {
      ...base,
      kind: input.kind,
      content,
      file_name: null,
      content_type: null,
      size_bytes: null,
      file_data: null,
    };
  }
  if (input.data.byteLength === 0) throw invalid('file', 'file is empty.');
  if (input.data.byteLength > MAX_EVIDENCE_FILE_BYTES) throw fileTooLarge();
  const type = detectFileType(input.data);
  if (!type) {
    throw invalid(
      'file',
      'file must be a PNG, JPEG, GIF, WebP or PDF file or plain UTF-8 text; its type is read from its content.',
    );
  }
  const description =
    input.description === undefined || input.description === ''
      ? ''
      : checkText(input.description, 'description', MAX_TEXT_CHARS);
  return {
    ...base,
    kind: 'file',
    content: description,
    file_name: safeFileName(input.fileName, type),
    content_type: type.contentType,
    size_bytes: input.data.byteLength,
    file_data: input.data,
  };
}

export function fileTooLarge(): ApiError {
  return new ApiError('invalid_request', `file must be at most ${MAX_EVIDENCE_FILE_BYTES} bytes (5 MiB).`, {
    status: 413,
    param: 'file',
  });
}

export const ownerOfDispute = (d: DisputeRow) => ({ merchantId: d.merchant_id, livemode: d.livemode });

/** The time a dispute lives in: its merchant's clock (the test clock in test mode). */
export async function disputeNow(ctx: ServiceContext, q: Queryable, dispute: DisputeRow): Promise<Date> {
  const offset = dispute.livemode ? 0 : await findMerchantClock(q, dispute.merchant_id);
  return merchantNow(ctx, { livemode: dispute.livemode, testClockOffsetMs: offset });
}

/**
 * Who may add evidence when: the buyer and the seller while the dispute is open and its
 * evidence window has not ended; the operator until the dispute is decided.
 */
function checkWindow(dispute: DisputeRow, by: DisputeParty, now: Date): void {
  if (dispute.status === 'resolved' || dispute.status === 'withdrawn') {
    throw new ApiError('conflict', `The dispute is ${dispute.status}; it takes no more evidence.`);
  }
  if (by === 'operator') return;
  if (dispute.status !== 'open' || now.getTime() >= dispute.evidence_due_by.getTime()) {
    throw new ApiError(
      'conflict',
      `The evidence window ended at ${dispute.evidence_due_by.toISOString()}; the case is under review.`,
    );
  }
}

/** A dispute's limits on how much evidence it keeps. */
export async function checkEvidenceLimits(
  q: Queryable,
  disputeId: string,
  adding: readonly NewEvidence[],
): Promise<void> {
  const held = await countEvidence(q, disputeId);
  if (held.all + adding.length > MAX_EVIDENCE_ITEMS) {
    throw invalid('evidence', `A dispute holds at most ${MAX_EVIDENCE_ITEMS} pieces of evidence.`);
  }
  const files = adding.filter((e) => e.kind === 'file').length;
  if (files > 0 && held.files + files > MAX_EVIDENCE_FILES) {
    throw invalid('file', `A dispute holds at most ${MAX_EVIDENCE_FILES} files.`);
  }
}

/**
 * Adds one piece of evidence to a dispute, in one database transaction with its dispute.updated
 * event. The caller has checked that its principal may see the dispute; this checks the window
 * (409 outside it) and the evidence (400, or 413 for a file over 5 MiB). `now` defaults to the
 * merchant's clock.
 */
export async function addEvidence(
  ctx: ServiceContext,
  disputeId: string,
  submittedBy: DisputeParty,
  evidence: EvidenceInput,
  now?: Date,
): Promise<DisputeView> {
  return ctx.db.transaction((tx) => addEvidenceIn(ctx, tx, disputeId, submittedBy, evidence, now));
}

/** addEvidence inside the caller's database transaction (the API runs it under an idempotency key). */
export async function addEvidenceIn(
  ctx: ServiceContext,
  tx: Queryable,
  disputeId: string,
  submittedBy: DisputeParty,
  evidence: EvidenceInput,
  now?: Date,
): Promise<DisputeView> {
  const found = await findDispute(tx, disputeId);
  if (!found) throw notFound('dispute', disputeId);
  const at = now ?? (await disputeNow(ctx, tx, found));
  const row = prepareEvidence(evidence, disputeId, submittedBy, at);
  // Only the dispute is locked: evidence never touches the transaction's state.
  const dispute = await lockDispute(tx, disputeId);
  if (!dispute) throw notFound('dispute', disputeId);
  checkWindow(dispute, submittedBy, at);
  await checkEvidenceLimits(tx, disputeId, [row]);
  await insertEvidence(tx, [row]);
  await touchDispute(tx, disputeId, at);
  const view = await loadDisputeView(ctx, disputeId, tx);
  const txn = await findTransaction(tx, ownerOfDispute(dispute), dispute.transaction_id);
  if (!view || !txn) throw new Error(`dispute ${disputeId} has no transaction`);
  await insertEvents(tx, [objectEvent('dispute.updated', refsOf(txn), view, at)]);
  return view;
}

/**
 * A stored evidence file and the dispute it belongs to, or undefined. Callers serve it only to
 * the dispute's merchant (same environment), the operator, or the buyer of its transaction,
 * with evidenceFileHeaders.
 */
export async function readEvidenceFile(
  ctx: Pick<ServiceContext, 'db'>,
  disputeId: string,
  evidenceId: string,
): Promise<{ dispute: DisputeRow; file: EvidenceFile } | undefined> {
  const dispute = await findDispute(ctx.db, disputeId);
  if (!dispute) return undefined;
  const file = await findEvidenceFile(ctx.db, disputeId, evidenceId);
  return file ? { dispute, file } : undefined;
}

/**
 * The headers an evidence file is served with, wherever it is served: its sniffed type, as a
 * download with a sanitised name, never sniffed, sandboxed if opened, never cached.
 */
export function evidenceFileHeaders(
  file: Pick<EvidenceFile, 'file_name' | 'content_type'>,
): Record<string, string> {
  return {
    'Content-Type': file.content_type,
    'Content-Disposition': `attachment; filename="${file.file_name.replace(/["\\]/g, '_')}"`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
  };
}
