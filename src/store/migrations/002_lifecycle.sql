-- Lifecycle: the double-entry journal, due work for the scheduler, payment attempts on the rails,
-- per-merchant test clocks and the buyer page's link.

-- Test mode runs on the merchant's own clock: system time plus this offset (test_helpers/clock/advance).
ALTER TABLE merchants ADD COLUMN test_clock_offset_ms bigint NOT NULL DEFAULT 0;

-- The buyer page's token is derived like the payment link's; only its hash is kept.
ALTER TABLE transactions ADD COLUMN buyer_token_hash text;
CREATE UNIQUE INDEX transactions_buyer_token ON transactions (buyer_token_hash);
ALTER TABLE transactions ADD COLUMN last_payment_attempt_id text;

-- One row per money movement: debit and credit of one amount, so every entry balances.
CREATE TABLE ledger_entries (
  id text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  currency text NOT NULL,
  transaction_id text REFERENCES transactions (id),
  kind text NOT NULL,
  debit_account text NOT NULL,
  credit_account text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  created_at timestamptz NOT NULL,
  CHECK (debit_account <> credit_account)
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_owner ON ledger_entries (merchant_id, livemode, currency);

-- Append-only: the journal is never edited or deleted, only added to.
CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only';
END;
$$;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();

-- Due work: claimed by workers with FOR UPDATE SKIP LOCKED, deleted when done.
CREATE TABLE scheduled_jobs (
  id text PRIMARY KEY,
  kind text NOT NULL,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  subject_id text NOT NULL,
  run_at timestamptz NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL,
  CONSTRAINT scheduled_jobs_one_per_subject UNIQUE (kind, subject_id)
);
CREATE INDEX scheduled_jobs_due ON scheduled_jobs (run_at);
CREATE INDEX scheduled_jobs_merchant ON scheduled_jobs (merchant_id, livemode, run_at);

-- Each try to pay a transaction on a rail; failed ones leave the transaction payable.
CREATE TABLE payment_attempts (
  id text PRIMARY KEY,
  transaction_id text NOT NULL REFERENCES transactions (id),
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  method text NOT NULL CHECK (method IN ('mobile_money', 'card')),
  status text NOT NULL CHECK (status IN ('pending', 'requires_action', 'succeeded', 'failed')),
  -- Masked instrument: last digits of the phone or card only.
  instrument text NOT NULL,
  rail_reference text,
  failure_code text,
  failure_message text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX payment_attempts_transaction ON payment_attempts (transaction_id, created_at DESC);
-- At most one attempt in flight per transaction.
CREATE UNIQUE INDEX payment_attempts_one_in_flight ON payment_attempts (transaction_id)
  WHERE status IN ('pending', 'requires_action');
