import type { Queryable } from './db.ts';
import type { DisputeParty } from './disputes.ts';

export type EvidenceKind = 'text' | 'url' | 'file';

/**
 * One piece of evidence without its file's bytes. For a file, `content` holds the description
 * given with it ('' without one); the API shows the download path in its place.
 */
export interface EvidenceRow {
  id: string;
  dispute_id: string;
  submitted_by: DisputeParty;
  kind: EvidenceKind;
  content: string;
  file_name: string | null;
  content_type: string | null;
  size_bytes: number | null;
  submitted_at: Date;
}

export interface NewEvidence extends EvidenceRow {
  file_data: Uint8Array | null;
}

export interface EvidenceFile {
  file_name: string;
  content_type: string;
  size_bytes: number;
  data: Buffer;
}

const COLUMNS =
  'id, dispute_id, submitted_by, kind, content, file_name, content_type, size_bytes, submitted_at';

export async function insertEvidence(q: Queryable, items: readonly NewEvidence[]): Promise<void> {
  for (const e of items) {
    await q.query(
      `INSERT INTO dispute_evidence (${COLUMNS}, file_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        e.id,
        e.dispute_id,
        e.submitted_by,
        e.kind,
        e.content,
        e.file_name,
        e.content_type,
        e.size_bytes,
        e.submitted_at,
        e.file_data,
      ],
    );
  }
}

/** The evidence of some disputes, oldest first within each (file bytes left out). */
export async function evidenceOf(q: Queryable, disputeIds: readonly string[]): Promise<EvidenceRow[]> {
  if (disputeIds.length === 0) return [];
  const { rows } = await q.query<EvidenceRow>(
    `SELECT ${COLUMNS} FROM dispute_evidence WHERE dispute_id = ANY($1::text[])
      ORDER BY dispute_id, submitted_at, id`,
    [disputeIds],
  );
  return rows;
}

/** How many pieces of evidence, and of them files, a dispute holds (its limits). */
export async function countEvidence(
  q: Queryable,
  disputeId: string,
): Promise<{ all: number; files: number }> {
  const { rows } = await q.query<{ total: number; files: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE kind = 'file')::int AS files
       FROM dispute_evidence WHERE dispute_id = $1`,
    [disputeId],
  );
  return { all: rows[0]?.total ?? 0, files: rows[0]?.files ?? 0 };
}

/** A stored file of a dispute, bytes included. */
export async function findEvidenceFile(
  q: Queryable,
  disputeId: string,
  evidenceId: string,
): Promise<EvidenceFile | undefined> {
  const { rows } = await q.query<{
    file_name: string;
    content_type: string;
    size_bytes: number;
    file_data: Uint8Array;
  }>(
    `SELECT file_name, content_type, size_bytes, file_data FROM dispute_evidence
      WHERE id = $1 AND dispute_id = $2 AND kind = 'file'`,
    [evidenceId, disputeId],
  );
  const row = rows[0];
  if (!row) return undefined;
  // pg returns a Buffer, PGlite a Uint8Array: one shape for the callers.
  const data = Buffer.from(row.file_data.buffer, row.file_data.byteOffset, row.file_data.byteLength);
  return { file_name: row.file_name, content_type: row.content_type, size_bytes: row.size_bytes, data };
}
