import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, type Currency, toMajorUnits } from '../../src/domain/money.ts';
import { findMove } from '../../src/domain/state-machine.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { verifyLedger } from '../../src/operations/verify-ledger.ts';
import { DB_KIND, type Harness, json, startHarness } from '../helpers/harness.ts';
import { assertEventTrails, assertLedgerSound, assertWellFormed } from '../helpers/ledger-invariants.ts';

/*
 * Random sequences of operations, concurrent ones included, against the real app over HTTP (PGlite,
 * or PostgreSQL when DATABASE_URL is set). After every step the books must add up (verifyLedger),
 * every transaction's event trail must be a path through the state machine, and no answer may be a
 * 5xx. Steps that run alone are also checked against the state machine: a move in the table
 * answers 200 and lands where the table says, any other move answers 409 and changes nothing.
 *
 * A failure prints fast-check's seed and path; replay it with FC_SEED=<seed> FC_PATH=<path>.
 */

const PHONES = {
  succeeds: '+254700000000',
  succeedsUganda: '+256772123456',
  insufficientFunds: '+254700000001',
  cancelled: '+254700001032',
  timeout: '+254700001037',
  wrongPin: '+254700002001',
};
const CARDS = {
  succeeds: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  challenge: '4000000000003220',
  notATestCard: '4111111111111111',
};
const SUCCEEDS = new Set([PHONES.succeeds, PHONES.succeedsUganda, CARDS.succeeds]);

type Instrument = { method: 'mobile_money'; phone: string } | { method: 'card'; card_number: string };

type ReleaseAmount =
  | { type: 'none' }
  | { type: 'part'; permille: number }
  | { type: 'all' }
  | { type: 'over'; extraMinor: number }
  | { type: 'sub_unit' }
  | { type: 'zero' };

type Op =
  | {
      kind: 'create';
      currency: Currency;
      amountMinor: number;
      condition: 'buyer_confirmation' | 'delivery_confirmation' | 'time_based';
      windowDays: number;
      releaseInSeconds: number;
    }
  | { kind: 'pay'; target: number; instrument: Instrument }
  | { kind: 'deliver' | 'confirm' | 'cancel'; target: number }
  | { kind: 'release'; target: number; amount: ReleaseAmount }
  | { kind: 'advance'; seconds: number }
  /** The transaction's next move forward, whatever its state (so runs reach the later states). */
  | { kind: 'progress'; target: number; choice: number };

type Concrete = Exclude<Op, { kind: 'progress' }>;

type Step = Op | { kind: 'concurrent'; ops: Op[] };

const DAY = 86_400;

const target = fc.nat({ max: 40 });
const createOp: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('create' as const),
  currency: fc.constantFrom<Currency>('KES', 'UGX'),
  amountMinor: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 50_000_000 })),
  condition: fc.constantFrom(
    'buyer_confirmation' as const,
    'delivery_confirmation' as const,
    'time_based' as const,
  ),
  windowDays: fc.integer({ min: 1, max: 3 }),
  releaseInSeconds: fc.integer({ min: 60, max: 4 * DAY }),
});
const instrument: fc.Arbitrary<Instrument> = fc.oneof(
  fc.constantFrom(
    { method: 'mobile_money' as const, phone: PHONES.succeeds },
    { method: 'card' as const, card_number: CARDS.succeeds },
  ),
  fc.constantFrom(...Object.values(PHONES)).map((phone) => ({ method: 'mobile_money' as const, phone })),
  fc.constantFrom(...Object.values(CARDS)).map((card_number) => ({ method: 'card' as const, card_number })),
);
const releaseAmount: fc.Arbitrary<ReleaseAmount> = fc.oneof(
  { arbitrary: fc.constant({ type: 'none' as const }), weight: 3 },
  {
    arbitrary: fc.integer({ min: 1, max: 999 }).map((permille) => ({ type: 'part' as const, permille })),
    weight: 4,
  },
  { arbitrary: fc.constant({ type: 'all' as const }), weight: 1 },
  {
    arbitrary: fc.integer({ min: 1, max: 1000 }).map((extraMinor) => ({ type: 'over' as const, extraMinor })),
    weight: 1,
  },
  { arbitrary: fc.constantFrom({ type: 'sub_unit' as const }, { type: 'zero' as const }), weight: 1 },
);
const advanceSeconds = fc.oneof(
  fc.integer({ min: 1, max: 7200 }),
  fc.constantFrom(DAY + 1, DAY - 1, 2 * DAY + 1, 3 * DAY + 1, 4 * DAY),
  fc.integer({ min: 1, max: 5 * DAY }),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: createOp, weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('pay' as const), target, instrument }), weight: 4 },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('deliver' as const, 'confirm' as const, 'cancel' as const),
      target,
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('release' as const), target, amount: releaseAmount }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), seconds: advanceSeconds }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('progress' as const), target, choice: fc.nat({ max: 999 }) }),
    weight: 10,
  },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: op, weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant('concurrent' as const),
      ops: fc.array(op, { minLength: 2, maxLength: 4 }),
    }),
    weight: 2,
  },
);
const scenario = fc.tuple(
  fc.array(createOp, { minLength: 1, maxLength: 3 }),
  fc.array(step, { minLength: 3, maxLength: 24 }),
);

interface Snapshot {
  id: string;
  status: string;
  settlement_status: string;
  currency: Currency;
  amount_minor: bigint;
  amount_released_minor: bigint;
  amount_refunded_minor: bigint;
  release_type: string;
  updated_at: Date;
  journal_rows: number;
  events: number;
  in_flight: boolean;
}

function held(s: Snapshot): bigint {
  return s.amount_minor - s.amount_released_minor - s.amount_refunded_minor;
}

/** A partial amount: permille of what is held, at least one minor unit. */
function partOf(s: Snapshot, permille: number): bigint {
  const part = (held(s) * BigInt(permille)) / 1000n;
  return part < 1n ? 1n : part;
}

function releaseBody(amount: ReleaseAmount, s: Snapshot | undefined): Record<string, unknown> {
  const currency = s?.currency ?? 'KES';
  const major = (minor: bigint) => toMajorUnits(minor < 1n ? 1n : minor, currency);
  switch (amount.type) {
    case 'none':
      return {};
    case 'part':
      return { amount: major(s ? partOf(s, amount.permille) : 1n) };
    case 'all':
      return { amount: major(s ? held(s) : 1n) };
    case 'over':
      return { amount: major((s ? held(s) : 0n) + BigInt(amount.extraMinor)) };
    case 'sub_unit':
      return { amount: currency === 'KES' ? 1.005 : 1.5 };
    case 'zero':
      return { amount: 0 };
  }
}

describe(`random operation sequences keep the books sound (${DB_KIND})`, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const snapshot = async (id: string): Promise<Snapshot | undefined> => {
    const { rows } = await h.ctx.db.query<Snapshot>(
      `SELECT t.id, t.status, t.settlement_status, t.currency, t.amount_minor, t.amount_released_minor,
              t.amount_refunded_minor, t.release_condition->>'type' AS release_type, t.updated_at,
              (SELECT count(*)::int FROM ledger_entries l WHERE l.transaction_id = t.id) AS journal_rows,
              (SELECT count(*)::int FROM events e WHERE e.service_transaction_id = t.id) AS events,
              EXISTS (SELECT 1 FROM payment_attempts a WHERE a.transaction_id = t.id
                        AND a.status IN ('pending', 'requires_action')) AS in_flight
         FROM transactions t WHERE t.id = $1`,
      [id],
    );
    return rows[0];
  };

  /** What the runs exercised (printed, so a change that starves a path shows). */
  const seen = new Map<string, number>();
  const tally = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);

  /** Runs one scenario for a fresh merchant (its own clock and books). */
  const runScenario = async (creates: Op[], steps: Step[]) => {
    const merchant: CreatedMerchant = await h.newMerchant();
    const ids: string[] = [];
    const request = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
      h.request({ method, url, payload, key: merchant.test_key });
    const idOf = (n: number) =>
      ids.length === 0 ? 'txn_0000000000000000000000000' : (ids[n % ids.length] as string);
    const merchantNow = async () => {
      const { rows } = await h.ctx.db.query<{ test_clock_offset_ms: bigint }>(
        'SELECT test_clock_offset_ms FROM merchants WHERE id = $1',
        [merchant.merchant_id],
      );
      return h.clock.now().getTime() + Number(rows[0]?.test_clock_offset_ms ?? 0n);
    };

    /** Sends one operation; a release's amount is drawn against `snap`, the state before it. */
    const send = async (o: Concrete, snap: Snapshot | undefined) => {
      switch (o.kind) {
        case 'create': {
          const body: Record<string, unknown> = {
            amount: toMajorUnits(BigInt(o.amountMinor), o.currency),
            currency: o.currency,
            title: 'Property test order',
            release_condition:
              o.condition === 'time_based'
                ? {
                    type: 'time_based',
                    review_window_days: o.windowDays,
                    // On the merchant's clock, which advance steps move.
                    release_at: new Date((await merchantNow()) + o.releaseInSeconds * 1000).toISOString(),
                  }
                : { type: o.condition, review_window_days: o.windowDays },
          };
          const res = await request('POST', '/v1/transactions', body);
          if (res.statusCode === 201) ids.push(String(json(res).service_transaction_id));
          return res;
        }
        case 'pay':
          return request('POST', `/v1/test_helpers/transactions/${idOf(o.target)}/pay`, o.instrument);
        case 'deliver':
        case 'confirm':
        case 'cancel':
          return request('POST', `/v1/transactions/${idOf(o.target)}/${o.kind}`, {});
        case 'release':
          return request('POST', `/v1/transactions/${idOf(o.target)}/release`, releaseBody(o.amount, snap));
        case 'advance':
          return request('POST', '/v1/test_helpers/clock/advance', { seconds: o.seconds });
      }
    };

    const describeOp = (o: Op) =>
      `${o.kind}${'target' in o ? ` ${idOf(o.target)}` : ''} ${JSON.stringify(o)}`;

    /** Turns a progress step into the concrete move forward from the state it was drawn against. */
    const resolve = (o: Op, snap: Snapshot | undefined): Concrete => {
      if (o.kind !== 'progress') return o;
      const { target, choice } = o;
      switch (snap?.status) {
        case 'pending_payment':
          return {
            kind: 'pay',
            target,
            instrument:
              choice % 2 === 0
                ? { method: 'mobile_money', phone: PHONES.succeeds }
                : { method: 'card', card_number: CARDS.succeeds },
          };
        case 'reserved':
          return { kind: choice % 4 === 0 ? 'confirm' : 'deliver', target };
        case 'delivered':
          if (choice % 5 === 0) return { kind: 'confirm', target };
          return {
            kind: 'release',
            target,
            amount: choice % 2 === 0 ? { type: 'none' } : { type: 'part', permille: 1 + (choice % 999) },
          };
        default:
          return { kind: 'cancel', target };
      }
    };

    /** What the state machine says a lone operation must answer, given the state before it. */
    const predict = (o: Concrete, s: Snapshot | undefined): { code: number; status?: string } => {
      if (o.kind === 'create') return { code: 201, status: 'pending_payment' };
      if (o.kind === 'advance') return { code: 200 };
      // The schema refuses a zero amount before the transaction is looked up; a sub-unit amount is
      // read against the transaction's currency, so an unknown transaction is a 404 first.
      if (!s) return { code: o.kind === 'release' && o.amount.type === 'zero' ? 400 : 404 };
      if (o.kind === 'pay') {
        if (s.status !== 'pending_payment' || s.in_flight) return { code: 409 };
        return SUCCEEDS.has('phone' in o.instrument ? o.instrument.phone : o.instrument.card_number)
          ? { code: 200, status: 'reserved' }
          : { code: 200, status: 'pending_payment' };
      }
      if (o.kind === 'release' && (o.amount.type === 'zero' || o.amount.type === 'sub_unit'))
        return { code: 400 };
      const move = findMove(o.kind, s.status, s.settlement_status);
      if (!move) return { code: 409 };
      if (o.kind === 'cancel' && s.status === 'pending_payment' && s.in_flight) return { code: 409 };
      if (o.kind === 'release' && o.amount.type === 'over') return { code: 400 };
      if (o.kind === 'release' && o.amount.type === 'part' && partOf(s, o.amount.permille) < held(s)) {
        return { code: 200, status: s.status };
      }
      if (o.kind === 'deliver' && s.release_type === 'delivery_confirmation')
        return { code: 200, status: 'confirmed' };
      return { code: 200, status: move.to };
    };

    const checkAll = async (context: string) => {
      await assertLedgerSound(h.ctx.db, merchant.merchant_id, context);
      await assertEventTrails(h.ctx.db, merchant.merchant_id, context);
    };

    for (const c of creates) {
      const res = await send(resolve(c, undefined), undefined);
      assert.equal(res.statusCode, 201, res.body);
    }
    for (const [index, raw] of steps.entries()) {
      if (raw.kind === 'concurrent') {
        const snaps = await Promise.all(
          raw.ops.map((o) => ('target' in o ? snapshot(idOf(o.target)) : undefined)),
        );
        const ops = raw.ops.map((o, i) => resolve(o, snaps[i]));
        const responses = await Promise.all(ops.map((o, i) => send(o, snaps[i])));
        const label = `step ${index} (concurrent: ${ops.map(describeOp).join(' | ')})`;
        for (const [i, res] of responses.entries()) {
          assertWellFormed(res, `${label} op ${i}`);
          tally(`concurrent ${ops[i]?.kind} ${res.statusCode}`);
        }
        await checkAll(label);
        continue;
      }
      const id = 'target' in raw ? idOf(raw.target) : undefined;
      const before = id ? await snapshot(id) : undefined;
      const s = resolve(raw, before);
      const label = `step ${index} (${describeOp(s)}${raw.kind === 'progress' ? ', as progress' : ''})`;
      const expected = predict(s, before);
      const res = await send(s, before);
      assertWellFormed(res, label);
      tally(`${s.kind}${s.kind === 'release' ? `(${s.amount.type})` : ''} ${res.statusCode}`);
      assert.equal(res.statusCode, expected.code, `${label}: ${res.body}`);
      if (expected.status !== undefined) assert.equal(json(res).status, expected.status, label);
      if (res.statusCode >= 400 && id && before) {
        // A refused move changes nothing: no state, no money, no events.
        assert.deepEqual(await snapshot(id), before, `${label} was refused but changed the transaction`);
      }
      if (s.kind === 'release' && res.statusCode === 200 && before) {
        const releasedNow = BigInt(
          Math.round(Number(json(res).amount_released) * 10 ** CURRENCY_EXPONENTS[before.currency]),
        );
        const expectedRelease = s.amount.type === 'part' ? partOf(before, s.amount.permille) : held(before);
        assert.equal(
          releasedNow - before.amount_released_minor,
          expectedRelease,
          `${label} released the wrong amount`,
        );
      }
      if (s.kind === 'advance') {
        // The advance answers only after all work due by the new time has run.
        const { rows } = await h.ctx.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM scheduled_jobs WHERE merchant_id = $1 AND run_at <= $2',
          [merchant.merchant_id, new Date(await merchantNow())],
        );
        assert.equal(rows[0]?.n, 0, `${label} answered with due work left`);
      }
      await checkAll(label);
    }
    const { rows } = await h.ctx.db.query<{ status: string; partial: boolean }>(
      `SELECT status, amount_released_minor > 0 AND amount_released_minor < amount_minor AS partial
         FROM transactions WHERE merchant_id = $1`,
      [merchant.merchant_id],
    );
    for (const r of rows) tally(`final ${r.status}${r.partial ? ' (partly released)' : ''}`);
  };

  it('every step leaves the journal balanced, holdings right, states in the table and no 5xx', async (t) => {
    const seed = process.env.FC_SEED
      ? Number(process.env.FC_SEED)
      : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
    const path = process.env.FC_PATH;
    t.diagnostic(`fast-check seed ${seed}${path ? ` path ${path}` : ''} (replay: FC_SEED=${seed})`);
    await fc.assert(
      fc.asyncProperty(scenario, ([creates, steps]) => runScenario(creates, steps)),
      { numRuns: Number(process.env.FC_RUNS ?? 20), seed, path, endOnFailure: process.env.FC_SHRINK !== '1' },
    );
    t.diagnostic(
      [...seen]
        .sort()
        .map(([what, n]) => `${what}: ${n}`)
        .join(', '),
    );
    // And the whole database, every merchant together.
    assert.deepEqual(await verifyLedger(h.ctx.db), []);
  });

  // Runs after the property (tests run in order): it corrupts its own merchant's books on purpose.
  it('verifyLedger reports a wrong released amount, a state outside the table, a double capture and a foreign journal row', async () => {
    const merchant = await h.newMerchant();
    const bystander = await h.newMerchant();
    const post = (m: CreatedMerchant, url: string, payload: Record<string, unknown> = {}) =>
      h.request({ method: 'POST', url, payload, key: m.test_key });
    const reserved = async (m: CreatedMerchant, pay = true) => {
      const id = String(
        json(await post(m, '/v1/transactions', { amount: 100, title: 'Books' })).service_transaction_id,
      );
      if (pay) {
        const res = await post(m, `/v1/test_helpers/transactions/${id}/pay`, {
          method: 'card',
          card_number: CARDS.succeeds,
        });
        assert.equal(json(res).status, 'reserved');
      }
      return id;
    };
    const [released, outside, doubled, foreign] = [
      await reserved(merchant),
      await reserved(merchant, false),
      await reserved(merchant),
      await reserved(merchant),
    ];
    await reserved(bystander);
    assert.deepEqual(await verifyLedger(h.ctx.db, { merchantId: merchant.merchant_id }), []);

    const db = h.ctx.db;
    await db.query('UPDATE transactions SET amount_released_minor = 2500 WHERE id = $1', [released]);
    await db.query(`UPDATE transactions SET status = 'confirmed' WHERE id = $1`, [outside]);
    const journal = (id: string, txn: string, currency: string, kind: string) =>
      db.query(
        `INSERT INTO ledger_entries (id, merchant_id, livemode, currency, transaction_id, kind, debit_account,
            credit_account, amount_minor, created_at)
         VALUES ($1, $2, false, $3, $4, $5, 'rail_clearing', 'escrow_held', 10000, now())`,
        [id, merchant.merchant_id, currency, txn, kind],
      );
    await journal('le_test_double', doubled, 'KES', 'capture');
    await journal('le_test_foreign', foreign, 'UGX', 'adjustment');

    const problems = await verifyLedger(db, { merchantId: merchant.merchant_id });
    const found = (subject: string) =>
      problems
        .filter((p) => p.subject === subject)
        .map((p) => p.check)
        .sort();
    assert.deepEqual(found(released), ['held', 'released']);
    assert.deepEqual(found(outside), ['held', 'state']);
    assert.deepEqual(found(doubled), ['captured', 'held']);
    assert.deepEqual(found(foreign), ['entry_owner']);
    const book = `${merchant.merchant_id}/test/KES`;
    assert.deepEqual(found(book), ['escrow_balance']);
    // Only this merchant's books are wrong.
    assert.deepEqual(await verifyLedger(db, { merchantId: bystander.merchant_id }), []);
    assert.equal((await verifyLedger(db)).length, problems.length);
  });
});
