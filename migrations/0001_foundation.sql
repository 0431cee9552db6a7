-- Orgs (agencies), their clients, API keys, FUEL, events and idempotency records.

CREATE TABLE orgs (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  house_client_id uuid NOT NULL,
  features jsonb NOT NULL DEFAULT '{}'::jsonb,
  fuel_balance bigint NOT NULL DEFAULT 0 CHECK (fuel_balance >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE clients (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  name text NOT NULL,
  is_house boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, id)
);

ALTER TABLE orgs
  ADD CONSTRAINT orgs_house_client_fk FOREIGN KEY (id, house_client_id)
  REFERENCES clients (org_id, id) DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  client_id uuid,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('agency', 'client', 'legacy_sms')),
  prefix text NOT NULL,
  last4 text NOT NULL,
  secret_hash bytea NOT NULL UNIQUE,
  rate_limit_per_minute integer NOT NULL DEFAULT 60 CHECK (rate_limit_per_minute > 0),
  expires_at timestamptz,
  revoked_at timestamptz,
  tag text,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  CHECK ((kind = 'client') = (client_id IS NOT NULL))
);
CREATE INDEX api_keys_org ON api_keys (org_id);

CREATE TABLE fuel_ledger (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id),
  amount bigint NOT NULL,
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fuel_ledger_org ON fuel_ledger (org_id, created_at DESC);

CREATE TABLE events (
  id text PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_org ON events (org_id, id DESC);
CREATE INDEX events_client ON events (org_id, client_id, id DESC);
CREATE INDEX events_org_type ON events (org_id, type, id DESC);

CREATE TABLE idempotency_keys (
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  response_status integer,
  response_body jsonb,
  locked_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, client_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
