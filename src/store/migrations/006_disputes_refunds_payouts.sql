-- Disputes with their evidence, refunds, and payouts to sellers with their lines. See
-- docs/disputes.md, docs/refunds.md and docs/payouts.md; the money rules are in src/domain/ledger.ts.

-- How long after release the merchant agreement lets a refund be taken from the merchant's balance.
ALTER TABLE merchants ADD COLUMN refunds_after_release_days integer NOT NULL DEFAULT 30
  CHECK (refunds_after_release_days >= 0);

-- Money of a transaction beside amount_released_minor and amount_refunded_minor:
-- the part of the refunds paid from the merchant's balance (after release), the approved funds
-- in payouts that have not failed, the part of those paid, and when the last of them was paid.
ALTER TABLE transactions
  ADD COLUMN amount_refunded_from_balance_minor bigint NOT NULL DEFAULT 0
    CHECK (amount_refunded_from_balance_minor >= 0 AND amount_refunded_from_balance_minor <= amount_refunded_minor),
  ADD COLUMN amount_batched_minor bigint NOT NULL DEFAULT 0
    CHECK (amount_batched_minor >= 0 AND amount_batched_minor <= amount_released_minor),
  ADD COLUMN amount_paid_out_minor bigint NOT NULL DEFAULT 0
    CHECK (amount_paid_out_minor >= 0 AND amount_paid_out_minor <= amount_batched_minor),
  ADD COLUMN released_at timestamptz;
-- Approved funds not yet in a payout: what the payout run looks for.
CREATE INDEX transactions_unbatched ON transactions (merchant_id, livemode, currency, id)
  WHERE amount_released_minor > amount_batched_minor;

CREATE TABLE disputes (
  id text PRIMARY KEY,
  transaction_id text NOT NULL REFERENCES transactions (id),
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'under_review', 'resolved', 'withdrawn')),
  reason text NOT NULL
    CHECK (reason IN ('not_received', 'not_as_described', 'damaged', 'unauthorized', 'other')),
  description text NOT NULL,
  opened_by text NOT NULL CHECK (opened_by IN ('buyer', 'seller', 'operator')),
  evidence_due_by timestamptz NOT NULL,
  decision text CHECK (decision IN ('seller', 'buyer', 'split')),
  amount_to_seller_minor bigint CHECK (amount_to_seller_minor >= 0),
  amount_to_buyer_minor bigint CHECK (amount_to_buyer_minor >= 0),
  decided_at timestamptz,
  note text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX disputes_list ON disputes (merchant_id, livemode, id DESC);
CREATE INDEX disputes_transaction ON disputes (transaction_id);
-- The operator's queue: cases not yet decided, by deadline.
CREATE INDEX disputes_queue ON disputes (evidence_due_by) WHERE status IN ('open', 'under_review');
-- At most one undecided dispute per transaction.
CREATE UNIQUE INDEX disputes_one_active ON disputes (transaction_id) WHERE status IN ('open', 'under_review');

-- Evidence: text, a URL, or a file kept here (bytea) and served only to the dispute's parties.
CREATE TABLE dispute_evidence (
  id text PRIMARY KEY,
  dispute_id text NOT NULL REFERENCES disputes (id),
  submitted_by text NOT NULL CHECK (submitted_by IN ('buyer', 'seller', 'operator')),
  kind text NOT NULL CHECK (kind IN ('text', 'url', 'file')),
  content text NOT NULL,
  file_name text,
  content_type text,
  size_bytes integer,
  file_data bytea,
  submitted_at timestamptz NOT NULL,
  CHECK ((kind = 'file') = (file_data IS NOT NULL))
);
CREATE INDEX dispute_evidence_dispute ON dispute_evidence (dispute_id, id);

CREATE TABLE refunds (
  id text PRIMARY KEY,
  transaction_id text NOT NULL REFERENCES transactions (id),
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  currency text NOT NULL,
  -- Where the money came from: escrow, and the merchant's balance (after release).
  from_hold_minor bigint NOT NULL CHECK (from_hold_minor >= 0),
  from_balance_minor bigint NOT NULL CHECK (from_balance_minor >= 0),
  reason text,
  -- What made it: POST /v1/refunds, a cancel after payment, or a dispute's outcome.
  origin text NOT NULL CHECK (origin IN ('api', 'cancel', 'dispute')),
  dispute_id text REFERENCES disputes (id),
  -- The status the refund moved the transaction from (a full refund), restored if it fails.
  restore_status text,
  failure_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (from_hold_minor + from_balance_minor = amount_minor)
);
CREATE INDEX refunds_list ON refunds (merchant_id, livemode, id DESC);
CREATE INDEX refunds_transaction ON refunds (transaction_id);

-- Each merchant's payout method and schedule, per environment. In test mode a merchant without a
-- row is paid to the simulated mobile-money number (docs/payouts.md).
CREATE TABLE payout_settings (
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  method text NOT NULL CHECK (method IN ('mobile_money', 'bank_transfer')),
  phone text,
  bank_code text,
  account_number text,
  schedule text NOT NULL DEFAULT 'daily' CHECK (schedule IN ('instant', 'daily')),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, livemode),
  CHECK ((method = 'mobile_money') = (phone IS NOT NULL)),
  CHECK ((method = 'bank_transfer') = (bank_code IS NOT NULL AND account_number IS NOT NULL))
);

CREATE TABLE payouts (
  id text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'in_transit', 'paid', 'failed', 'reversed')),
  method text NOT NULL CHECK (method IN ('mobile_money', 'bank_transfer')),
  -- Where the rail sends it (phone, or bank code and account), and its masked form for display.
  rail_destination jsonb NOT NULL,
  destination text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  currency text NOT NULL,
  line_count integer NOT NULL,
  rail_reference text,
  failure_reason text,
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  updated_at timestamptz NOT NULL
);
CREATE INDEX payouts_list ON payouts (merchant_id, livemode, id DESC);

CREATE TABLE payout_lines (
  payout_id text NOT NULL REFERENCES payouts (id),
  transaction_id text NOT NULL REFERENCES transactions (id),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  PRIMARY KEY (payout_id, transaction_id)
);
CREATE INDEX payout_lines_transaction ON payout_lines (transaction_id);
