-- Foundation: merchants, their keys, operator keys, protected transactions, payment links,
-- idempotency records, the events outbox and service settings. Money is bigint minor units.

CREATE TABLE merchants (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  default_currency text NOT NULL DEFAULT 'KES',
  verification_status text NOT NULL DEFAULT 'unverified'
    CHECK (verification_status IN ('unverified', 'pending', 'verified', 'rejected')),
  rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
  created_at timestamptz NOT NULL
);

-- Merchant keys (test, live) and operator keys; only a SHA-256 of each key is kept.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('test', 'live', 'operator')),
  merchant_id text REFERENCES merchants (id),
  key_hash text NOT NULL UNIQUE,
  key_hint text NOT NULL,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  replaced_by text REFERENCES api_keys (id),
  created_at timestamptz NOT NULL,
  CHECK ((kind = 'operator') = (merchant_id IS NULL))
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id);

CREATE TABLE transactions (
  id text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  merchant_reference text,
  merchant_order_id text,
  status text NOT NULL,
  settlement_status text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  currency text NOT NULL,
  title text NOT NULL,
  vertical text NOT NULL,
  customer jsonb,
  seller jsonb,
  release_condition jsonb NOT NULL,
  review_deadline timestamptz,
  payment_method jsonb,
  amount_released_minor bigint NOT NULL DEFAULT 0 CHECK (amount_released_minor >= 0),
  amount_refunded_minor bigint NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0),
  callback_url text,
  metadata jsonb NOT NULL DEFAULT '{}',
  payment_link_id text NOT NULL,
  -- Fingerprint of the create body: a repeat with the same merchant_reference must match it.
  request_fingerprint text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT transactions_merchant_reference UNIQUE (merchant_id, livemode, merchant_reference)
);
CREATE INDEX transactions_list ON transactions (merchant_id, livemode, id DESC);
CREATE INDEX transactions_order_id ON transactions (merchant_id, livemode, merchant_order_id);

-- Checkout links: the URL token is derived from the id with the service secret and only its hash is kept.
CREATE TABLE payment_links (
  id text PRIMARY KEY,
  transaction_id text NOT NULL REFERENCES transactions (id),
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX payment_links_transaction ON payment_links (transaction_id);

-- One row per idempotency key; written in the same transaction as the mutation it protects.
CREATE TABLE idempotency_keys (
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  key text NOT NULL,
  operation text NOT NULL,
  request_fingerprint text NOT NULL,
  response_status integer,
  resource_type text,
  resource_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, livemode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- The outbox: every event is written in the transaction of the change it reports.
CREATE TABLE events (
  id text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  type text NOT NULL,
  service_transaction_id text,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_list ON events (merchant_id, livemode, id DESC);

CREATE TABLE settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
