import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hydrateEventPayload } from '../../src/operations/event-payloads.ts';
import type { CreatedMerchant } from '../../src/operations/manage-merchants.ts';
import { DB_KIND, type Harness, json, startHarness } from '../helpers/harness.ts';
import {
  assertEventTrails,
  assertLedgerSound,
  journalKinds,
  statusChanges,
} from '../helpers/ledger-invariants.ts';

const DAY = 86_400;
const MILLISECOND_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe(`the scheduler and the events of every move (${DB_KIND})`, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  /** Each test gets its own merchant, so its clock starts at zero offset. */
  const client = async () => {
    const merchant: CreatedMerchant = await h.newMerchant();
    const post = (url: string, payload: Record<string, unknown> = {}) =>
      h.request({ method: 'POST', url, payload, key: merchant.test_key });
    const get = async (id: string) =>
      json(await h.request({ method: 'GET', url: `/v1/transactions/${id}`, key: merchant.test_key }));
    const create = async (body: Record<string, unknown> = {}) => {
      const res = await post('/v1/transactions', { amount: 2500, title: 'Scheduled', ...body });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).service_transaction_id);
    };
    const pay = async (id: string, card = '4242424242424242') => {
      const res = await post(`/v1/test_helpers/transactions/${id}/pay`, {
        method: 'card',
        card_number: card,
      });
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const advance = async (seconds: number) => {
      const res = await post('/v1/test_helpers/clock/advance', { seconds });
      assert.equal(res.statusCode, 200, res.body);
      return json<{ jobs_run: number; now: string }>(res);
    };
    const sound = async () => {
      await assertLedgerSound(h.ctx.db, merchant.merchant_id);
      await assertEventTrails(h.ctx.db, merchant.merchant_id);
    };
    return { merchant, post, get, create, pay, advance, sound };
  };

  const jobsOf = async (subjectId: string) =>
    (
      await h.ctx.db.query<{ kind: string; attempts: number; last_error: string | null; run_at: Date }>(
        'SELECT kind, attempts, last_error, run_at FROM scheduled_jobs WHERE subject_id = $1 ORDER BY kind',
        [subjectId],
      )
    ).rows;

  it('the payment window ends unpaid: expired, failed, one status change from pending_payment, no payment after', async () => {
    const c = await client();
    const id = await c.create();
    // The expiry job is written by the create itself, due one payment window (24 h) after it on
    // the merchant's clock; this test schedules nothing.
    const created = await c.get(id);
    assert.deepEqual(
      (await jobsOf(id)).map((j) => [j.kind, j.run_at.toISOString()]),
      [['expire_payment', new Date(Date.parse(String(created.created_at)) + DAY * 1000).toISOString()]],
    );
    assert.equal((await c.advance(DAY - 1)).jobs_run, 0);
    assert.equal((await c.get(id)).status, 'pending_payment');
    await c.advance(2);
    const expired = await c.get(id);
    assert.equal(expired.status, 'expired');
    assert.equal(expired.settlement_status, 'failed');
    assert.deepEqual(await statusChanges(h.ctx.db, id), [
      { previous_status: 'pending_payment', status: 'expired', settlement_status: 'failed' },
    ]);
    const late = await c.post(`/v1/test_helpers/transactions/${id}/pay`, {
      method: 'card',
      card_number: '4242424242424242',
    });
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(json<{ error: { code: string } }>(late).error.code, 'conflict');
    assert.deepEqual(await journalKinds(h.ctx.db, id), {});
    await c.sound();
  });

  it('a time_based transaction is released at release_at and not a second before', async () => {
    const c = await client();
    const releaseAt = new Date(h.clock.now().getTime() + 2 * 3600_000);
    const id = await c.create({
      release_condition: { type: 'time_based', release_at: releaseAt.toISOString() },
    });
    await c.pay(id);
    assert.deepEqual(
      (await jobsOf(id)).map((j) => [j.kind, j.run_at.toISOString()]),
      [['time_release', releaseAt.toISOString()]],
    );

    await c.advance(2 * 3600 - 1);
    assert.equal((await c.get(id)).status, 'reserved');
    const at = await c.advance(1);
    assert.equal(at.now, releaseAt.toISOString());
    assert.equal(at.jobs_run, 1);
    const released = await c.get(id);
    assert.equal(released.status, 'confirmed');
    assert.equal(released.settlement_status, 'approved_for_release');
    assert.equal(released.amount_released, 2500);
    assert.deepEqual((await statusChanges(h.ctx.db, id)).at(-1), {
      previous_status: 'reserved',
      status: 'confirmed',
      settlement_status: 'approved_for_release',
    });
    assert.deepEqual(await jobsOf(id), []);
    await c.sound();
  });

  it('a delivery_confirmation transaction is released by its delivery, in one step', async () => {
    const c = await client();
    const id = await c.create({ release_condition: { type: 'delivery_confirmation' } });
    await c.pay(id);
    const res = await c.post(`/v1/transactions/${id}/deliver`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).status, 'confirmed');
    assert.equal(json(res).settlement_status, 'approved_for_release');
    assert.equal(json(res).amount_released, 2500);
    assert.deepEqual(await statusChanges(h.ctx.db, id), [
      { previous_status: 'pending_payment', status: 'reserved', settlement_status: 'pending_confirmation' },
      { previous_status: 'reserved', status: 'delivered', settlement_status: 'pending_confirmation' },
      { previous_status: 'delivered', status: 'confirmed', settlement_status: 'approved_for_release' },
    ]);
    // Nothing is left for the scheduler: no auto-release waits on a review window.
    assert.deepEqual(await jobsOf(id), []);
    await c.sound();
  });

  it('a job that fails is postponed with its error, and the others run', async () => {
    const c = await client();
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const id = await c.create({ satisfaction_days: 1 });
      await c.pay(id);
      assert.equal((await c.post(`/v1/transactions/${id}/deliver`)).statusCode, 200);
      ids.push(id);
    }
    const [first, broken, last] = ids as [string, string, string];
    // A fault in the database when the scheduler writes one of the three (as a constraint would).
    const fn = `refuse_${broken.toLowerCase()}`;
    await h.ctx.db.exec(`
      CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id = '${broken}' THEN RAISE EXCEPTION 'simulated fault on %', NEW.id; END IF;
        RETURN NEW;
      END;
      $$;
      CREATE TRIGGER ${fn} BEFORE UPDATE ON transactions FOR EACH ROW EXECUTE FUNCTION ${fn}();`);
    try {
      const ran = await c.advance(DAY + 60);
      assert.equal(ran.jobs_run, 3);
      assert.equal((await c.get(first)).status, 'confirmed');
      assert.equal((await c.get(last)).status, 'confirmed');
      assert.equal((await c.get(broken)).status, 'delivered');
      const [job] = await jobsOf(broken);
      assert.equal(job?.kind, 'auto_release');
      assert.equal(job?.attempts, 1);
      assert.match(String(job?.last_error), /simulated fault on/);
      // Retried a minute later on the merchant's clock, not at once and not never.
      assert.equal(job?.run_at.toISOString(), new Date(Date.parse(ran.now) + 60_000).toISOString());
      await c.sound();
    } finally {
      await h.ctx.db.exec(`DROP TRIGGER ${fn} ON transactions; DROP FUNCTION ${fn}();`);
    }
    assert.equal((await c.advance(59)).jobs_run, 0);
    assert.equal((await c.advance(1)).jobs_run, 1);
    assert.equal((await c.get(broken)).status, 'confirmed');
    assert.deepEqual(await jobsOf(broken), []);
    await c.sound();
  });

  it('every status change writes one transaction.status_changed with every field of spec 2.3, in its own database transaction', async () => {
    const c = await client();
    const id = await c.create({
      merchant_reference: 'ord-ref-1',
      merchant_order_id: 'order-77',
      satisfaction_days: 1,
    });

    /**
     * The status_changed event from `previous` (the clock stands still, so timestamps tie), with the
     * xmin of it, of the transaction row and of the transaction's newest journal row.
     */
    const latest = async (previous: string) => {
      const { rows } = await h.ctx.db.query<{
        id: string;
        type: string;
        payload: Record<string, unknown>;
        event_xmin: string;
        row_xmin: string;
        journal_xmin: string | null;
      }>(
        `SELECT e.id, e.type, e.payload, e.xmin::text AS event_xmin,
                (SELECT t.xmin::text FROM transactions t WHERE t.id = e.service_transaction_id) AS row_xmin,
                (SELECT l.xmin::text FROM ledger_entries l WHERE l.transaction_id = e.service_transaction_id
                  ORDER BY l.created_at DESC, l.xmin::text::bigint DESC LIMIT 1) AS journal_xmin
           FROM events e
          WHERE e.service_transaction_id = $1 AND e.type = 'transaction.status_changed'
            AND e.payload->>'previous_status' = $2`,
        [id, previous],
      );
      assert.equal(rows.length, 1, `one status_changed event from ${previous}`);
      assert.ok(rows[0]);
      // As delivered: the stored payload with its link URLs rebuilt.
      return { ...rows[0], payload: hydrateEventPayload(h.ctx, rows[0].payload) };
    };
    const expectChange = async (previous: string, view: Record<string, unknown>, moneyMoved: boolean) => {
      const e = await latest(previous);
      assert.deepEqual(
        Object.keys(e.payload)
          .filter((k) => k !== 'data')
          .sort(),
        [
          'amount',
          'currency',
          'event_id',
          'event_type',
          'merchant_order_id',
          'merchant_reference',
          'occurred_at',
          'previous_status',
          'service_transaction_id',
          'settlement_status',
          'status',
        ],
      );
      const p = e.payload;
      assert.equal(p.event_id, e.id);
      assert.equal(p.event_type, 'transaction.status_changed');
      assert.equal(p.service_transaction_id, id);
      assert.equal(p.merchant_reference, 'ord-ref-1');
      assert.equal(p.merchant_order_id, 'order-77');
      assert.equal(p.previous_status, previous);
      assert.equal(p.status, view.status);
      assert.equal(p.settlement_status, view.settlement_status);
      assert.equal(p.amount, 2500);
      assert.equal(p.currency, 'KES');
      assert.match(String(p.occurred_at), MILLISECOND_ISO);
      // Written by the same database transaction as the change (and as its journal rows).
      assert.equal(e.event_xmin, e.row_xmin, 'event and state change in one database transaction');
      if (moneyMoved)
        assert.equal(e.journal_xmin, e.row_xmin, 'journal rows in the same database transaction');
    };

    const paid = await c.pay(id);
    await expectChange('pending_payment', paid, true);
    const paidEvents = (
      await h.ctx.db.query<{ payload: { data: { status: string } }; xmin: string }>(
        `SELECT payload, xmin::text FROM events WHERE service_transaction_id = $1 AND type = 'transaction.paid'`,
        [id],
      )
    ).rows;
    assert.equal(paidEvents.length, 1);
    assert.equal(paidEvents[0]?.payload.data.status, 'reserved');
    assert.equal(paidEvents[0]?.xmin, (await latest('pending_payment')).row_xmin);

    const delivered = json(await c.post(`/v1/transactions/${id}/deliver`));
    await expectChange('reserved', delivered, false);
    // The scheduler's move (auto-release at the review deadline) is written the same way.
    await c.advance(DAY + 1);
    await expectChange('delivered', await c.get(id), true);

    const changes = await statusChanges(h.ctx.db, id);
    assert.deepEqual(
      changes.map((x) => `${x.previous_status}>${x.status}`),
      ['pending_payment>reserved', 'reserved>delivered', 'delivered>confirmed'],
    );
    // A refused move writes no event.
    assert.equal((await c.post(`/v1/transactions/${id}/deliver`)).statusCode, 409);
    assert.equal((await statusChanges(h.ctx.db, id)).length, 3);
    await c.sound();
  });

  it('transaction.paid fires once, on reaching reserved, and not for failed attempts', async () => {
    const c = await client();
    const id = await c.create();
    const paidCount = async () =>
      (
        await h.ctx.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events WHERE service_transaction_id = $1 AND type = 'transaction.paid'`,
          [id],
        )
      ).rows[0]?.n;
    assert.equal((await c.pay(id, '4000000000000002')).status, 'pending_payment');
    const timedOut = await c.post(`/v1/test_helpers/transactions/${id}/pay`, {
      method: 'mobile_money',
      phone: '+254700001037',
    });
    assert.equal(json(timedOut).status, 'pending_payment', timedOut.body);
    assert.equal(await paidCount(), 0);
    assert.deepEqual(await statusChanges(h.ctx.db, id), []);
    assert.equal((await c.pay(id)).status, 'reserved');
    assert.equal(await paidCount(), 1);
    assert.equal(
      (
        await c.post(`/v1/test_helpers/transactions/${id}/pay`, {
          method: 'card',
          card_number: '4242424242424242',
        })
      ).statusCode,
      409,
    );
    assert.equal(await paidCount(), 1);
    await c.sound();
  });
});
