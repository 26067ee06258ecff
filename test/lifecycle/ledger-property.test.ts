import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, type Currency, toMajorUnits } from '../../src/domain/money.ts';
import { findMove } from '../../src/domain/state-machine.ts';
import { createOperatorKey } from '../../src/operations/manage-keys.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { verifyLedger } from '../../src/operations/verify-ledger.ts';
import { DB_KIND, type Harness, json, startHarness } from '../helpers/harness.ts';
import { assertEventTrails, assertLedgerSound, assertWellFormed } from '../helpers/ledger-invariants.ts';

/*
 * Random sequences of operations (payments, deliveries, releases, disputes and their outcomes,
 * refunds before and after release, payouts that succeed, fail and are reversed), concurrent ones included, against the real app over HTTP (PGlite,
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
  /** Pays; its refunds fail (the money goes back, the state is restored). */
  refundFails: '4000000000005126',
};
const SUCCEEDS = new Set([PHONES.succeeds, PHONES.succeedsUganda, CARDS.succeeds, CARDS.refundFails]);
/** Payout destinations: the simulated payout rail fails one ending in 0001. */
const PAYOUT_PHONES = { paid: '+254711000000', fails: '+254711000001' };
const OPERATOR = 'operator';

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
  | { kind: 'dispute'; target: number }
  | { kind: 'resolve'; target: number; decision: 'seller' | 'buyer' | 'split'; permille: number }
  | { kind: 'refund'; target: number; amount: RefundAmount }
  | { kind: 'payout_settings'; failing: boolean; instant: boolean }
  | { kind: 'reverse'; n: number }
  /** The transaction's next move forward, whatever its state (so runs reach the later states). */
  | { kind: 'progress'; target: number; choice: number };

type Concrete = Exclude<Op, { kind: 'progress' }>;

type RefundAmount = { type: 'none' } | { type: 'part'; permille: number } | { type: 'over' };

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
const refundAmount: fc.Arbitrary<RefundAmount> = fc.oneof(
  { arbitrary: fc.constant({ type: 'none' as const }), weight: 2 },
  {
    arbitrary: fc.integer({ min: 1, max: 999 }).map((permille) => ({ type: 'part' as const, permille })),
    weight: 3,
  },
  { arbitrary: fc.constant({ type: 'over' as const }), weight: 1 },
);
const moneyOp: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('dispute' as const), target }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant('resolve' as const),
      target,
      decision: fc.constantFrom('seller' as const, 'buyer' as const, 'split' as const),
      permille: fc.integer({ min: 1, max: 999 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('refund' as const), target, amount: refundAmount }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant('payout_settings' as const),
      failing: fc.boolean(),
      instant: fc.boolean(),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('reverse' as const), n: fc.nat({ max: 5 }) }), weight: 1 },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: moneyOp, weight: 4 },
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
  amount_refunded_from_balance_minor: bigint;
  amount_paid_out_minor: bigint;
  /** Paid-out funds may still be refunded from the merchant's balance (agreement window open). */
  balance_refund_open: boolean;
  release_type: string;
  updated_at: Date;
  journal_rows: number;
  events: number;
  in_flight: boolean;
  active_dispute: string | null;
  last_dispute: string | null;
  /** A decided dispute whose refund the rail refused: the operator may decide it again. */
  redecidable: boolean;
}

function held(s: Snapshot): bigint {
  return (
    s.amount_minor -
    s.amount_released_minor -
    (s.amount_refunded_minor - s.amount_refunded_from_balance_minor)
  );
}

function refundable(s: Snapshot): bigint {
  const fromBalance = s.balance_refund_open
    ? s.amount_paid_out_minor - s.amount_refunded_from_balance_minor
    : 0n;
  return (['reserved', 'delivered'].includes(s.status) ? held(s) : 0n) + fromBalance;
}

function permilleOf(total: bigint, permille: number): bigint {
  const part = (total * BigInt(permille)) / 1000n;
  return part < 1n ? 1n : part;
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
    operatorKey = (await createOperatorKey(h.ctx)).key;
  });
  after(() => h.close());

  let operatorKey = '';
  const snapshot = async (id: string): Promise<Snapshot | undefined> => {
    const { rows } = await h.ctx.db.query<Snapshot>(
      `SELECT t.id, t.status, t.settlement_status, t.currency, t.amount_minor, t.amount_released_minor,
              t.amount_refunded_minor, t.amount_refunded_from_balance_minor, t.amount_paid_out_minor,
              t.released_at IS NOT NULL AND m.now <= t.released_at
                + make_interval(days => m.refunds_after_release_days) AS balance_refund_open,
              t.release_condition->>'type' AS release_type, t.updated_at,
              (SELECT d.id FROM disputes d WHERE d.transaction_id = t.id
                 AND d.status IN ('open', 'under_review')) AS active_dispute,
              (SELECT max(d.id) FROM disputes d WHERE d.transaction_id = t.id) AS last_dispute,
              t.status = 'under_review' AND EXISTS (
                SELECT 1 FROM refunds r JOIN disputes d ON d.id = r.dispute_id
                 WHERE r.transaction_id = t.id AND r.status = 'failed' AND d.status = 'resolved'
              ) AS redecidable,
              (SELECT count(*)::int FROM ledger_entries l WHERE l.transaction_id = t.id) AS journal_rows,
              (SELECT count(*)::int FROM events e WHERE e.service_transaction_id = t.id) AS events,
              EXISTS (SELECT 1 FROM payment_attempts a WHERE a.transaction_id = t.id
                        AND a.status IN ('pending', 'requires_action')) AS in_flight
         FROM transactions t
         CROSS JOIN LATERAL (
           SELECT $2::timestamptz + mm.test_clock_offset_ms * interval '1 millisecond' AS now,
                  mm.refunds_after_release_days
             FROM merchants mm WHERE mm.id = t.merchant_id
         ) m
        WHERE t.id = $1`,
      [id, h.clock.now()],
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
    const request = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>, as?: string) =>
      h.request({ method, url, payload, key: as === OPERATOR ? operatorKey : merchant.test_key });
    const major = (minor: bigint, snap: Snapshot | undefined) => toMajorUnits(minor, snap?.currency ?? 'KES');
    const NO_DISPUTE = 'dsp_00000000000000000000000000';
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
        case 'dispute':
          return request('POST', '/v1/disputes', {
            service_transaction_id: idOf(o.target),
            reason: 'not_as_described',
            description: 'Property test dispute',
          });
        case 'resolve': {
          const body: Record<string, unknown> = { decision: o.decision };
          if (o.decision === 'split')
            body.amount_to_seller = major(permilleOf(snap ? held(snap) : 1n, o.permille), snap);
          const dispute = snap?.active_dispute ?? snap?.last_dispute ?? NO_DISPUTE;
          return request('POST', `/v1/disputes/${dispute}/resolve`, body, OPERATOR);
        }
        case 'refund': {
          const body: Record<string, unknown> = { service_transaction_id: idOf(o.target) };
          const most = snap ? refundable(snap) : 0n;
          if (o.amount.type === 'part') body.amount = major(permilleOf(most, o.amount.permille), snap);
          if (o.amount.type === 'over') body.amount = major(most + 1n, snap);
          return request('POST', '/v1/refunds', body);
        }
        case 'payout_settings':
          return request('POST', '/v1/payout_settings', {
            method: 'mobile_money',
            phone: o.failing ? PAYOUT_PHONES.fails : PAYOUT_PHONES.paid,
            schedule: o.instant ? 'instant' : 'daily',
          });
        case 'reverse': {
          const paid = json<{ data: { id: string }[] }>(
            await request('GET', '/v1/payouts?status=paid&limit=100'),
          );
          const payout =
            paid.data[o.n % Math.max(paid.data.length, 1)]?.id ?? 'po_00000000000000000000000000';
          return request('POST', `/v1/test_helpers/payouts/${payout}/reverse`, {});
        }
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
          if (choice % 6 === 1) return { kind: 'dispute', target };
          if (choice % 6 === 2) return { kind: 'refund', target, amount: { type: 'part', permille: choice } };
          return { kind: choice % 4 === 0 ? 'confirm' : 'deliver', target };
        case 'delivered':
          if (choice % 5 === 0) return { kind: 'confirm', target };
          if (choice % 4 === 1) return { kind: 'dispute', target };
          if (choice % 11 === 0)
            return { kind: 'refund', target, amount: { type: 'part', permille: choice } };
          return {
            kind: 'release',
            target,
            amount: choice % 2 === 0 ? { type: 'none' } : { type: 'part', permille: 1 + (choice % 999) },
          };
        case 'disputed':
        case 'under_review': {
          const decisions = ['seller', 'buyer', 'split'] as const;
          return {
            kind: 'resolve',
            target,
            decision: decisions[choice % 3] ?? 'seller',
            permille: 1 + (choice % 999),
          };
        }
        case 'confirmed':
          // The next payout run (daily, at midnight UTC on the merchant's clock) pays it.
          return { kind: 'advance', seconds: DAY };
        case 'released':
          if (choice % 3 === 0) return { kind: 'reverse', n: choice };
          return {
            kind: 'refund',
            target,
            amount: choice % 2 === 0 ? { type: 'none' } : { type: 'part', permille: 1 + (choice % 999) },
          };
        case 'refunded':
          return { kind: 'advance', seconds: 1 };
        default:
          return { kind: 'cancel', target };
      }
    };

    /** What the state machine says a lone operation must answer, given the state before it. */
    const predict = (o: Concrete, s: Snapshot | undefined): { code: number; status?: string } => {
      if (o.kind === 'create') return { code: 201, status: 'pending_payment' };
      if (o.kind === 'advance') return { code: 200 };
      if (o.kind === 'payout_settings') return { code: 200 };
      // Which payout is paid is read at send time; a reversal is checked by the invariants only.
      if (o.kind === 'reverse') return { code: -1 };
      if (o.kind === 'dispute') {
        if (!s) return { code: 404 };
        return ['reserved', 'delivered'].includes(s.status) ? { code: 201, status: 'open' } : { code: 409 };
      }
      if (o.kind === 'resolve') {
        if (!s || (!s.active_dispute && !s.last_dispute)) return { code: 404 };
        const open = s.active_dispute && ['disputed', 'under_review'].includes(s.status);
        if (!open && !s.redecidable) return { code: 409 };
        if (o.decision === 'split' && permilleOf(held(s), o.permille) >= held(s)) return { code: 400 };
        return { code: 200, status: 'resolved' };
      }
      if (o.kind === 'refund') {
        if (!s) return { code: 404 };
        const refundableState =
          ['reserved', 'delivered'].includes(s.status) ||
          (s.status === 'released' && s.settlement_status === 'released');
        if (!refundableState || s.in_flight || refundable(s) === 0n) return { code: 409 };
        if (o.amount.type === 'over') return { code: 400 };
        return { code: 201, status: 'pending' };
      }
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

    const o_refundAmount = (amount: RefundAmount, snap: Snapshot) =>
      amount.type === 'part' ? permilleOf(refundable(snap), amount.permille) : refundable(snap);

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
      if (expected.code !== -1) assert.equal(res.statusCode, expected.code, `${label}: ${res.body}`);
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
      if (s.kind === 'refund' && res.statusCode === 201 && before && id) {
        const refunded = BigInt(json(res).amount_minor as number);
        const after = await snapshot(id);
        const expected = o_refundAmount(s.amount, before);
        assert.equal(refunded, expected, `${label} refunded the wrong amount`);
        // A refund settles later; it may already have failed and been returned, never more.
        assert.ok(
          after && after.amount_refunded_minor <= before.amount_refunded_minor + refunded,
          `${label} refunded more than asked`,
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
    const { rows: money } = await h.ctx.db.query<{ what: string }>(
      `SELECT 'payout ' || status AS what FROM payouts WHERE merchant_id = $1
       UNION ALL SELECT 'refund ' || status FROM refunds WHERE merchant_id = $1
       UNION ALL SELECT 'dispute ' || status || coalesce(' ' || decision, '') FROM disputes WHERE merchant_id = $1`,
      [merchant.merchant_id],
    );
    for (const r of money) tally(r.what);
  };

  it('every step leaves the journal balanced, holdings right, states in the table and no 5xx', async (t) => {
    const seed = process.env.FC_SEED
      ? Number(process.env.FC_SEED)
      : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
    const path = process.env.FC_PATH;
    t.diagnostic(`fast-check seed ${seed}${path ? ` path ${path}` : ''} (replay: FC_SEED=${seed})`);
    await fc.assert(
      fc.asyncProperty(scenario, ([creates, steps]) => runScenario(creates, steps)),
      { numRuns: Number(process.env.FC_RUNS ?? 50), seed, path, endOnFailure: process.env.FC_SHRINK !== '1' },
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
    // The released amount set behind the ledger's back also shows in the book's seller_payable.
    assert.deepEqual(found(book), ['escrow_balance', 'seller_payable']);
    // Only this merchant's books are wrong.
    assert.deepEqual(await verifyLedger(db, { merchantId: bystander.merchant_id }), []);
    assert.equal((await verifyLedger(db)).length, problems.length);
  });
});
