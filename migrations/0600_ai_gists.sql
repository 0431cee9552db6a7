-- AI gists: one row per generated summary of a contact, company or deal. A row is written `generating`
-- (the claim) in the transaction that debits its FUEL, and becomes `ready` when the model answered; the
-- partial unique index allows one generation in flight per subject, whichever API process asked.

CREATE TABLE gists (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  subject_type text NOT NULL CHECK (subject_type IN ('contact', 'company', 'deal')),
  subject_id uuid NOT NULL,
  -- sha256 (hex) of the canonical JSON of what the gist was written from.
  source_hash text NOT NULL,
  -- Who writes gists (provider and configured model): a change of writer is a cache miss.
  generator text NOT NULL,
  status text NOT NULL CHECK (status IN ('generating', 'ready')),
  summary text,
  highlights jsonb,
  -- The model as the provider reported it.
  model text,
  fuel_cost integer NOT NULL CHECK (fuel_cost >= 0),
  -- While generating: when a waiting request may give the claim up (its FUEL refunded).
  claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  generated_at timestamptz,
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  CHECK ((status = 'ready') = (summary IS NOT NULL AND generated_at IS NOT NULL)),
  CHECK ((status = 'generating') = (claimed_until IS NOT NULL))
);

-- The single flight: at most one generation in flight per subject.
CREATE UNIQUE INDEX gists_in_flight ON gists (org_id, client_id, subject_type, subject_id)
  WHERE status = 'generating';
-- The cache: the newest ready gist of a subject for a source and writer.
CREATE INDEX gists_cache ON gists (org_id, client_id, subject_type, subject_id, source_hash, generator, generated_at DESC)
  WHERE status = 'ready';
-- Abandoned claims, for the sweeper.
CREATE INDEX gists_claims ON gists (claimed_until) WHERE status = 'generating';
