-- Webhooks: merchant endpoints, the signing secret of each merchant and environment, one delivery
-- per event and target (a transaction's callback_url, each matching endpoint) with its attempts,
-- and the failing state of callback URLs. See docs/webhooks.md.

-- The worker fans each event out to its targets once. A trigger queues every new event here in the
-- transaction that writes it, so the events themselves stay as written (their xmin still proves
-- they were written with the change they report). Events written before webhooks existed are not
-- queued: they were never promised to anyone, and a first start must not send a month of them.
CREATE TABLE events_to_fan_out (
  event_id text PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
  merchant_id text NOT NULL,
  livemode boolean NOT NULL
);
CREATE FUNCTION events_queue_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events_to_fan_out (event_id, merchant_id, livemode)
    SELECT id, merchant_id, livemode FROM new_events;
  RETURN NULL;
END;
$$;
CREATE TRIGGER events_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION events_queue_fan_out();
CREATE INDEX events_transaction ON events (service_transaction_id);

-- One signing secret per merchant and environment (whsec_…). It must be recoverable to sign, so it
-- is kept sealed (AES-256-GCM) under a key derived from the service secret (SAFEHOLD_SECRET).
CREATE TABLE webhook_secrets (
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  sealed_secret text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, livemode)
);

CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  url text NOT NULL,
  description text,
  -- Event types, or '{*}' for all.
  enabled_events text[] NOT NULL,
  status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  -- Set when an event's last attempt fails, cleared by the next success.
  failing boolean NOT NULL DEFAULT false,
  failing_since timestamptz,
  -- The last failing-endpoint alert (at most one per 24 hours), on the merchant's clock.
  last_alert_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Deleted endpoints are kept (their deliveries name them) but never shown or sent to.
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (merchant_id, livemode, id DESC)
  WHERE deleted_at IS NULL;

-- A transaction's callback_url has no endpoint row: its failing state and alert throttle are kept
-- per merchant, environment and URL origin (scheme, host and port).
CREATE TABLE webhook_callback_targets (
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  origin text NOT NULL,
  failing boolean NOT NULL DEFAULT false,
  failing_since timestamptz,
  last_alert_at timestamptz,
  last_failed_url text,
  last_failed_event_id text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, livemode, origin)
);

-- One event to one target: up to five attempts (60 s, 5 min, 30 min, 2 h apart). A worker claims a
-- due delivery by writing a lease (claimed_until, on the database's clock, and a token), commits,
-- sends, then records the attempt under the same token; a lease left by a crashed worker runs out
-- and the delivery is sent again (at least once).
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  merchant_id text NOT NULL REFERENCES merchants (id),
  livemode boolean NOT NULL,
  -- NULL for the transaction's callback_url.
  endpoint_id text REFERENCES webhook_endpoints (id),
  url text NOT NULL,
  -- What concurrency is bounded by: the endpoint id, or 'callback:' + the URL's origin.
  target_key text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt is due, on the merchant's clock; NULL once the delivery is over.
  next_attempt_at timestamptz,
  claimed_until timestamptz,
  claim_token text,
  -- A redelivery replaces the finished delivery of the same event and target.
  superseded_by text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (merchant_id, livemode, event_id)
  WHERE status = 'failed' AND superseded_by IS NULL;
CREATE UNIQUE INDEX webhook_deliveries_one_pending ON webhook_deliveries
  (event_id, (coalesce(endpoint_id, 'callback_url'))) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number BETWEEN 1 AND 5),
  url text NOT NULL,
  -- On the merchant's clock (the X-Service-Timestamp header always carries the real time).
  attempted_at timestamptz NOT NULL,
  succeeded boolean NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  response_excerpt text,
  error text,
  PRIMARY KEY (delivery_id, number)
);
