import { ACCOUNTS } from '../domain/ledger.ts';
import { heldMinor } from '../domain/plan-move.ts';
import { reachablePairs } from '../domain/state-machine.ts';
import type { Db, Queryable } from '../store/db.ts';
import { accountBalances } from '../store/ledger.ts';

/** One way the stored money disagrees with itself. */
export interface LedgerProblem {
  check:
    | 'journal_row'
    | 'accounts_sum'
    | 'escrow_balance'
    | 'entry_owner'
    | 'held'
    | 'released'
    | 'refunded'
    | 'payouts'
    | 'book_balance'
    | 'seller_payable'
    | 'payout_clearing'
    | 'refund_clearing'
    | 'refund_rows'
    | 'captured'
    | 'state';
  /** What is wrong: a journal row, a transaction or a merchant's currency. */
  subject: string;
  message: string;
}

export interface VerifyOptions {
  /** Only this merchant's books (both environments). */
  merchantId?: string;
  /** Transactions read per query (a large book is walked in pages). */
  pageSize?: number;
}

interface TransactionMoneyRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  currency: string;
  status: string;
  settlement_status: string;
  amount_minor: bigint;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
  amount_refunded_from_balance_minor: bigint;
  amount_batched_minor: bigint;
  amount_paid_out_minor: bigint;
  captured_minor: bigint;
  approved_minor: bigint;
  /** Net refunds from escrow and from the merchant's balance (less those the rail returned). */
  refunded_minor: bigint;
  refunded_balance_minor: bigint;
  /** Net approved funds in payouts (less failed ones), and those paid. */
  batched_minor: bigint;
  paid_out_minor: bigint;
  capture_rows: bigint;
  foreign_rows: bigint;
  /** The journal's refunds paid by the rail. */
  refund_paid_minor: bigint;
  /** The transaction's refund rows: not failed (all, and from the balance), succeeded, pending. */
  refund_rows_minor: bigint;
  refund_rows_balance_minor: bigint;
  refund_rows_succeeded_minor: bigint;
  refund_rows_pending_minor: bigint;
}

/** What a verification read, beside the problems it found (the CLI prints it). */
export interface LedgerReport {
  problems: LedgerProblem[];
  transactions: number;
  journalRows: number;
}

/** Per book: what the transactions and refunds say each liability account should hold. */
interface BookExpectation {
  held: bigint;
  payable: bigint;
  inPayouts: bigint;
  pendingRefunds: bigint;
}

const MAX_ROW_PROBLEMS = 100;
const KNOWN_ACCOUNTS: readonly string[] = ACCOUNTS;

function bookOf(b: { merchant_id: string; livemode: boolean; currency: string }): string {
  return `${b.merchant_id}/${b.livemode ? 'live' : 'test'}/${b.currency}`;
}

/** Journal rows that could not be part of a sound journal (the schema refuses them too). */
async function badJournalRows(q: Queryable, merchantId: string | null): Promise<LedgerProblem[]> {
  const { rows } = await q.query<{
    id: string;
    amount_minor: bigint;
    debit_account: string;
    credit_account: string;
  }>(
    `SELECT id, amount_minor, debit_account, credit_account FROM ledger_entries
      WHERE ($1::text IS NULL OR merchant_id = $1)
        AND (amount_minor <= 0 OR debit_account = credit_account
             OR NOT (debit_account = ANY($2::text[])) OR NOT (credit_account = ANY($2::text[])))
      ORDER BY id LIMIT $3`,
    [merchantId, KNOWN_ACCOUNTS, MAX_ROW_PROBLEMS],
  );
  return rows.map((r) => ({
    check: 'journal_row',
    subject: r.id,
    message: `journal row moves ${r.amount_minor} from ${r.debit_account} to ${r.credit_account}`,
  }));
}

/** The transaction-money checks of one transaction against its own journal rows. */
function transactionProblems(t: TransactionMoneyRow, pairs: Set<string>): LedgerProblem[] {
  const problems: LedgerProblem[] = [];
  const add = (check: LedgerProblem['check'], message: string) =>
    problems.push({ check, subject: t.id, message });

  if (!pairs.has(`${t.status}/${t.settlement_status}`)) {
    add(
      'state',
      `status ${t.status} with settlement_status ${t.settlement_status} is not in the state machine`,
    );
  }
  if (t.foreign_rows > 0n) {
    add('entry_owner', `${t.foreign_rows} journal rows belong to another merchant, environment or currency`);
  }
  if (t.captured_minor !== 0n && (t.captured_minor !== t.amount_minor || t.capture_rows !== 1n)) {
    add(
      'captured',
      `captured ${t.captured_minor} in ${t.capture_rows} rows; expected nothing or the full ${t.amount_minor} once`,
    );
  }
  const journalHeld = t.captured_minor - t.approved_minor - t.refunded_minor;
  const journalRefunded = t.refunded_minor + t.refunded_balance_minor;
  const rowHeld = heldMinor(t);
  if (journalHeld < 0n) add('held', `journal holds ${journalHeld}, below zero`);
  if (rowHeld < 0n) add('held', `the transaction row holds ${rowHeld}, below zero`);
  if (journalHeld !== rowHeld) {
    add(
      'held',
      `journal holds ${journalHeld} (captured ${t.captured_minor} - approved ${t.approved_minor} - refunded from escrow ${t.refunded_minor}) but the ${t.status} row holds ${rowHeld}`,
    );
  }
  if (t.amount_released_minor !== t.approved_minor) {
    add('released', `amount_released_minor ${t.amount_released_minor}, journal approved ${t.approved_minor}`);
  }
  if (t.amount_refunded_minor !== journalRefunded) {
    add('refunded', `amount_refunded_minor ${t.amount_refunded_minor}, journal refunded ${journalRefunded}`);
  }
  if (t.amount_refunded_from_balance_minor !== t.refunded_balance_minor) {
    add(
      'refunded',
      `amount_refunded_from_balance_minor ${t.amount_refunded_from_balance_minor}, journal ${t.refunded_balance_minor}`,
    );
  }
  if (t.amount_batched_minor !== t.batched_minor || t.amount_paid_out_minor !== t.paid_out_minor) {
    add(
      'payouts',
      `in payouts ${t.amount_batched_minor} (journal ${t.batched_minor}), paid out ${t.amount_paid_out_minor} (journal ${t.paid_out_minor})`,
    );
  }
  if (t.amount_refunded_minor !== t.refund_rows_minor) {
    add(
      'refund_rows',
      `amount_refunded_minor ${t.amount_refunded_minor}, but its refunds that did not fail total ${t.refund_rows_minor}`,
    );
  }
  if (t.amount_refunded_from_balance_minor !== t.refund_rows_balance_minor) {
    add(
      'refund_rows',
      `amount_refunded_from_balance_minor ${t.amount_refunded_from_balance_minor}, but its refunds take ${t.refund_rows_balance_minor} from the balance`,
    );
  }
  if (t.refund_paid_minor !== t.refund_rows_succeeded_minor) {
    add(
      'refund_rows',
      `journal refund_paid ${t.refund_paid_minor}, but its succeeded refunds total ${t.refund_rows_succeeded_minor}`,
    );
  }
  if (t.paid_out_minor > t.batched_minor || t.batched_minor > t.approved_minor) {
    add(
      'payouts',
      `paid out ${t.paid_out_minor} > batched ${t.batched_minor} or batched > approved ${t.approved_minor}`,
    );
  }
  return problems;
}

async function check(q: Queryable, options: VerifyOptions): Promise<LedgerReport> {
  const merchantId = options.merchantId ?? null;
  const pageSize = options.pageSize ?? 5000;
  const problems = await badJournalRows(q, merchantId);

  // Per book (merchant, environment, currency): every account's balance from the journal.
  const books = new Map<string, { total: bigint; accounts: Map<string, bigint> }>();
  for (const b of await accountBalances(q, options.merchantId)) {
    const book = books.get(bookOf(b)) ?? { total: 0n, accounts: new Map<string, bigint>() };
    book.total += b.balance_minor;
    book.accounts.set(b.account, b.balance_minor);
    books.set(bookOf(b), book);
  }
  for (const [book, { total }] of books) {
    if (total !== 0n) {
      problems.push({ check: 'accounts_sum', subject: book, message: `accounts sum to ${total}, not 0` });
    }
  }

  // Per transaction, in pages by id: the row against its journal rows.
  const pairs = reachablePairs();
  const expected = new Map<string, BookExpectation>();
  let transactions = 0;
  let after = '';
  for (;;) {
    const { rows } = await q.query<TransactionMoneyRow>(
      `SELECT t.id, t.merchant_id, t.livemode, t.currency, t.status, t.settlement_status, t.amount_minor,
              t.amount_released_minor, t.amount_refunded_minor, t.amount_refunded_from_balance_minor,
              t.amount_batched_minor, t.amount_paid_out_minor,
              coalesce(m.captured, 0)::bigint AS captured_minor,
              coalesce(m.approved, 0)::bigint AS approved_minor,
              (coalesce(m.refunded, 0) - coalesce(m.refund_returned, 0))::bigint AS refunded_minor,
              (coalesce(m.refunded_balance, 0) - coalesce(m.refund_returned_balance, 0))::bigint
                AS refunded_balance_minor,
              (coalesce(m.batched, 0) - coalesce(m.payout_returned, 0))::bigint AS batched_minor,
              coalesce(m.paid_out, 0)::bigint AS paid_out_minor,
              coalesce(m.capture_rows, 0)::bigint AS capture_rows,
              coalesce(m.foreign_rows, 0)::bigint AS foreign_rows,
              coalesce(m.refund_paid, 0)::bigint AS refund_paid_minor,
              coalesce(r.kept, 0)::bigint AS refund_rows_minor,
              coalesce(r.kept_balance, 0)::bigint AS refund_rows_balance_minor,
              coalesce(r.succeeded, 0)::bigint AS refund_rows_succeeded_minor,
              coalesce(r.pending, 0)::bigint AS refund_rows_pending_minor
         FROM transactions t
         LEFT JOIN LATERAL (
           SELECT sum(l.amount_minor) FILTER (WHERE l.kind = 'capture') AS captured,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'approve') AS approved,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'refund') AS refunded,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'refund_returned') AS refund_returned,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'refund_from_balance') AS refunded_balance,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'refund_returned_to_balance')
                    AS refund_returned_balance,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'payout') AS batched,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'payout_returned') AS payout_returned,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'payout_paid') AS paid_out,
                  sum(l.amount_minor) FILTER (WHERE l.kind = 'refund_paid') AS refund_paid,
                  count(*) FILTER (WHERE l.kind = 'capture') AS capture_rows,
                  count(*) FILTER (WHERE l.merchant_id <> t.merchant_id OR l.livemode <> t.livemode
                                      OR l.currency <> t.currency) AS foreign_rows
             FROM ledger_entries l WHERE l.transaction_id = t.id
         ) m ON true
         LEFT JOIN LATERAL (
           SELECT sum(f.amount_minor) FILTER (WHERE f.status <> 'failed') AS kept,
                  sum(f.from_balance_minor) FILTER (WHERE f.status <> 'failed') AS kept_balance,
                  sum(f.amount_minor) FILTER (WHERE f.status = 'succeeded') AS succeeded,
                  sum(f.amount_minor) FILTER (WHERE f.status = 'pending') AS pending
             FROM refunds f WHERE f.transaction_id = t.id
         ) r ON true
        WHERE t.id > $1 AND ($2::text IS NULL OR t.merchant_id = $2)
        ORDER BY t.id LIMIT $3`,
      [after, merchantId, pageSize],
    );
    transactions += rows.length;
    for (const t of rows) {
      problems.push(...transactionProblems(t, pairs));
      const book = bookOf(t);
      const e = expected.get(book) ?? { held: 0n, payable: 0n, inPayouts: 0n, pendingRefunds: 0n };
      e.held += heldMinor(t);
      e.payable += t.amount_released_minor - t.amount_batched_minor;
      e.inPayouts += t.amount_batched_minor - t.amount_paid_out_minor;
      e.pendingRefunds += t.refund_rows_pending_minor;
      expected.set(book, e);
    }
    const last = rows.at(-1);
    if (!last || rows.length < pageSize) break;
    after = last.id;
  }

  // Each liability account holds exactly what the transactions say it owes (credit balances are
  // negative): escrow what is held, seller_payable the approved funds not yet in a payout,
  // payout_clearing those in payouts not yet paid, refund_clearing the refunds still pending.
  const LIABILITIES: [LedgerProblem['check'], string, keyof BookExpectation, string][] = [
    ['escrow_balance', 'escrow_held', 'held', 'the transactions hold'],
    ['seller_payable', 'seller_payable', 'payable', 'the transactions have approved and not batched'],
    ['payout_clearing', 'payout_clearing', 'inPayouts', 'the transactions have in payouts not yet paid'],
    ['refund_clearing', 'refund_clearing', 'pendingRefunds', 'pending refunds total'],
  ];
  const none: BookExpectation = { held: 0n, payable: 0n, inPayouts: 0n, pendingRefunds: 0n };
  for (const book of new Set([...books.keys(), ...expected.keys()])) {
    const e = expected.get(book) ?? none;
    for (const [checkName, account, field, what] of LIABILITIES) {
      const balance = books.get(book)?.accounts.get(account) ?? 0n;
      if (balance !== -e[field]) {
        problems.push({
          check: checkName,
          subject: book,
          message: `${account} balance ${balance}, but ${what} ${e[field]}`,
        });
      }
    }
  }
  const { rows: counted } = await q.query<{ n: bigint }>(
    'SELECT count(*)::bigint AS n FROM ledger_entries WHERE $1::text IS NULL OR merchant_id = $1',
    [merchantId],
  );
  return { problems, transactions, journalRows: Number(counted[0]?.n ?? 0n) };
}

/**
 * Recomputes the books from the journal and compares them with the transactions (the check
 * behind `safehold ledger verify`). Returns every problem found; an empty list means sound:
 *
 * - every journal row moves a positive amount between two different, known accounts;
 * - per merchant, environment and currency, the accounts sum to zero;
 * - per transaction, captured - approved - refunded equals what the row says is held (heldMinor),
 *   and neither is negative; amount_released_minor and amount_refunded_minor equal the approved
 *   and refunded totals; the capture is nothing or the full amount, once; its journal rows are in
 *   its own merchant, environment and currency;
 * - every transaction's (status, settlement_status) is a pair the state machine can produce;
 * - per transaction, its refund rows agree: those that did not fail total amount_refunded_minor (and
 *   their balance parts amount_refunded_from_balance_minor); those that succeeded total the
 *   journal's refund_paid;
 * - per book, each liability account equals what the transactions say: escrow_held what they hold,
 *   seller_payable what is approved and not in a payout (amount_released_minor -
 *   amount_batched_minor), payout_clearing what is in payouts not yet paid (amount_batched_minor -
 *   amount_paid_out_minor), refund_clearing the pending refunds.
 *
 * Everything is read in one read-only, repeatable-read database transaction, so writes running
 * alongside cannot make a sound book look unsound.
 */
export async function verifyLedger(db: Db, options: VerifyOptions = {}): Promise<LedgerProblem[]> {
  return (await verifyLedgerReport(db, options)).problems;
}

/** verifyLedger with what it read: how many transactions and journal rows (`safehold ledger verify`). */
export async function verifyLedgerReport(db: Db, options: VerifyOptions = {}): Promise<LedgerReport> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return check(tx, options);
  });
}

/** The report as `safehold ledger verify` prints it: a summary line, then one line per problem. */
export function describeLedgerReport(report: LedgerReport, merchantId?: string): string {
  const scope = merchantId ? ` of merchant ${merchantId}` : '';
  const checked = `${report.transactions} transactions, ${report.journalRows} journal rows checked${scope}`;
  if (report.problems.length === 0) return `ledger sound: ${checked}\n`;
  const lines = report.problems.map((p) => `  ${p.check} ${p.subject}: ${p.message}`);
  return `ledger unsound: ${report.problems.length} problems; ${checked}\n${lines.join('\n')}\n`;
}
