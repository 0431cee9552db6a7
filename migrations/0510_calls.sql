-- Calls, both directions, with their transcripts. The voice provider reports each call's progress; the
-- ids of the reports applied are kept on the call, so a repeated report changes nothing. An outbound
-- call is created `queued` with what it needs to be placed, and a worker places it under a lease.

CREATE TABLE calls (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  from_number text NOT NULL,
  to_number text NOT NULL,
  contact_phone text,
  contact_name text,
  contact_id uuid,
  agent_id uuid,
  status text NOT NULL CHECK (status IN
    ('queued', 'ringing', 'in_progress', 'completed', 'voicemail', 'no_answer', 'busy', 'failed')),
  disposition text,
  outcome text,
  summary text,
  recording_url text,
  recording_duration_seconds integer,
  duration_seconds integer,
  cost_cents integer,
  voicemail_left boolean NOT NULL DEFAULT false,
  started_at timestamptz,
  answered_at timestamptz,
  -- Set by the call's final report (completed or failed): a call without it is in flight.
  ended_at timestamptz,
  -- Milliseconds, as the list's page tokens carry it.
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  provider text,
  provider_call_id text,
  -- Ids of the progress reports applied to this call (`provider:providerCallId:stage`).
  reports text[] NOT NULL DEFAULT '{}',
  -- Outbound only: the cause that asked for the call (one call per cause), and its placement.
  cause_key text,
  placement jsonb,
  placement_state text CHECK (placement_state IN ('pending', 'placed', 'unconfirmed', 'abandoned')),
  -- When a pending placement may be claimed: now for a new one, the lease's end for a claimed one.
  place_after timestamptz,
  placement_attempts integer NOT NULL DEFAULT 0,
  sdr_campaign_id uuid,
  prospect_id uuid,
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  FOREIGN KEY (org_id, client_id, agent_id) REFERENCES agents (org_id, client_id, id),
  UNIQUE (provider, provider_call_id),
  UNIQUE (org_id, cause_key)
);
-- The list, newest first, and its date ranges and counts (an index-only range per filter).
CREATE INDEX calls_tenant_created ON calls (org_id, client_id, created_at DESC, id DESC);
CREATE INDEX calls_agent ON calls (org_id, client_id, agent_id, created_at DESC, id DESC)
  WHERE agent_id IS NOT NULL;
CREATE INDEX calls_contact ON calls (org_id, client_id, contact_id, created_at DESC, id DESC)
  WHERE contact_id IS NOT NULL;
CREATE INDEX calls_status ON calls (org_id, client_id, status, created_at DESC, id DESC);
-- What the placement loop claims.
CREATE INDEX calls_placement_due ON calls (place_after) WHERE placement_state = 'pending';
-- A campaign's calls in flight (its concurrency limit).
CREATE INDEX calls_campaign_in_flight ON calls (sdr_campaign_id)
  WHERE sdr_campaign_id IS NOT NULL AND ended_at IS NULL;

CREATE TABLE call_transcript_turns (
  org_id uuid NOT NULL,
  call_id uuid NOT NULL REFERENCES calls (id),
  position integer NOT NULL,
  speaker text NOT NULL,
  content text NOT NULL,
  start_time_seconds double precision NOT NULL,
  PRIMARY KEY (call_id, position)
);

-- How many calls each client has per UTC day, agent, direction and status, kept by triggers in the
-- transaction of every change, so `count` over a long range sums days instead of counting calls (only
-- the partial days at the range's ends are counted call by call).
CREATE TABLE call_day_counts (
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  day date NOT NULL,
  agent_id uuid,
  direction text NOT NULL,
  status text NOT NULL,
  calls integer NOT NULL,
  CONSTRAINT call_day_counts_key UNIQUE NULLS NOT DISTINCT (org_id, client_id, day, agent_id, direction, status)
);

CREATE FUNCTION count_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE call_day_counts SET calls = calls - 1
    WHERE org_id = OLD.org_id AND client_id = OLD.client_id AND day = (OLD.created_at AT TIME ZONE 'UTC')::date
      AND agent_id IS NOT DISTINCT FROM OLD.agent_id AND direction = OLD.direction AND status = OLD.status;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO call_day_counts (org_id, client_id, day, agent_id, direction, status, calls)
    VALUES (NEW.org_id, NEW.client_id, (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.agent_id, NEW.direction,
            NEW.status, 1)
    ON CONFLICT ON CONSTRAINT call_day_counts_key DO UPDATE SET calls = call_day_counts.calls + 1;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER calls_counted AFTER INSERT OR DELETE ON calls FOR EACH ROW EXECUTE FUNCTION count_call();
CREATE TRIGGER calls_recounted AFTER UPDATE OF status, agent_id, direction, created_at, org_id, client_id ON calls
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.agent_id IS DISTINCT FROM NEW.agent_id
    OR OLD.direction IS DISTINCT FROM NEW.direction OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.client_id IS DISTINCT FROM NEW.client_id)
  EXECUTE FUNCTION count_call();
