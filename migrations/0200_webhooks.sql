-- Webhook subscriptions, one delivery per (event, subscription), and the log of every attempt.

CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  -- The client that made it; the house client for an agency key acting as itself.
  client_id uuid NOT NULL,
  -- Made by an agency key acting as itself: receives the events of every client of the org.
  all_clients boolean NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL CHECK (cardinality(events) > 0),
  description text,
  active boolean NOT NULL DEFAULT true,
  -- AES-256-GCM under ENCRYPTION_KEY, bound to (org, client, id); see src/platform/crypto.ts.
  secret_ciphertext bytea NOT NULL,
  secret_last4 text NOT NULL,
  consecutive_failures integer NOT NULL DEFAULT 0,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id)
);
CREATE INDEX webhook_subscriptions_scope ON webhook_subscriptions (org_id, client_id, id DESC);

-- The unit of work: one event to one subscription. At most one row per pair, so a re-run of the
-- fan-out adds nothing. A worker takes a row with a lease; a lease left by a dead worker expires.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  event_type text NOT NULL,
  event_created_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'dead_letter', 'skipped')),
  -- Requests made so far, and those of the current retry schedule (a recovery starts a new one).
  attempts integer NOT NULL DEFAULT 0,
  scheduled_attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- A manual retry: one attempt outside the schedule, after which the row returns to resume_*.
  manual boolean NOT NULL DEFAULT false,
  resume_status text,
  resume_at timestamptz,
  lease_id uuid,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_window ON webhook_deliveries (subscription_id, event_created_at);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

-- The delivery log: one row per attempt (and per skipped event); its id is the X-Service-Delivery-Id sent.
CREATE TABLE webhook_delivery_attempts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  event_type text NOT NULL,
  attempt integer NOT NULL,
  manual boolean NOT NULL DEFAULT false,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'retrying', 'dead_letter', 'skipped')),
  response_status integer,
  response_body text,
  error_class text,
  error text,
  duration_ms integer,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_delivery_attempts_log ON webhook_delivery_attempts (subscription_id, id DESC);
CREATE INDEX webhook_delivery_attempts_status ON webhook_delivery_attempts (subscription_id, status, id DESC);
CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id);

-- A time-ordered UUID (version 7) made in SQL, for log rows a statement creates in bulk; the same
-- kind as the application's newId(), so the log still reads newest-first by id.
CREATE FUNCTION webhook_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
      PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
      FROM 1 FOR 6), 52, 1), 53, 1),
    'hex')::uuid
$$;
