-- SDR campaigns: an agency's outbound voice campaigns, their prospects and the org's SDR settings.
-- A campaign lives under the org's house client (agency keys only); its prospects are contacts of any
-- client of the org. The dialer locks a campaign row per tick (SKIP LOCKED), so two workers never dial
-- for one campaign at once and its concurrency holds; each dial's cause key `sdr:<prospect>:<attempt>`
-- is unique in the calls table, so a retried tick never dials one attempt twice.

-- A contact's own IANA time zone (optional): the calling window of a prospect applies in it.
ALTER TABLE contacts ADD COLUMN timezone text;

CREATE TABLE sdr_settings (
  org_id uuid PRIMARY KEY REFERENCES orgs (id),
  from_number text,
  voice_id text,
  voice_name text,
  business_name text,
  timezone text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sdr_campaigns (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  agent_id uuid NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  description text CHECK (char_length(description) <= 4000),
  opening_message text,
  voicemail_message text,
  system_prompt text,
  voice_id text,
  voice_name text,
  business_name text,
  from_number text NOT NULL,
  max_concurrent_calls integer NOT NULL CHECK (max_concurrent_calls BETWEEN 1 AND 10),
  calling_window_start text NOT NULL,
  calling_window_end text NOT NULL,
  calling_days integer[] NOT NULL,
  respect_timezone boolean NOT NULL,
  -- The zone of the window when respect_timezone is off (the SDR settings' zone at creation).
  timezone text NOT NULL,
  max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 10),
  retry_interval_hours integer NOT NULL CHECK (retry_interval_hours >= 0),
  ring_timeout_seconds integer NOT NULL CHECK (ring_timeout_seconds BETWEEN 15 AND 120),
  max_duration_seconds integer NOT NULL CHECK (max_duration_seconds BETWEEN 30 AND 1800),
  scheduled_start_at timestamptz,
  voicemail_enabled boolean NOT NULL,
  cal_com_booking_url text,
  post_call_email text,
  status text NOT NULL CHECK (status IN
    ('draft', 'scheduled', 'active', 'paused', 'completed', 'cancelled', 'archived')),
  -- The first dial (sdr.campaign.started fires with it, once).
  started_at timestamptz,
  completed_at timestamptz,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  FOREIGN KEY (org_id, client_id, agent_id) REFERENCES agents (org_id, client_id, id),
  UNIQUE (org_id, id)
);
CREATE INDEX sdr_campaigns_org ON sdr_campaigns (org_id, id DESC);
-- What the dialer visits each tick.
CREATE INDEX sdr_campaigns_dialing ON sdr_campaigns (status, scheduled_start_at)
  WHERE status IN ('scheduled', 'active');

CREATE TABLE sdr_prospects (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  -- The contact's own client: consent and do-not-call are asked in its scope.
  contact_client_id uuid NOT NULL,
  phone text,
  timezone text NOT NULL,
  timezone_source text NOT NULL CHECK (timezone_source IN ('explicit', 'contact', 'phone', 'settings', 'org', 'default')),
  status text NOT NULL CHECK (status IN
    ('pending', 'queued', 'dialing', 'connected', 'booked', 'voicemail', 'exhausted', 'skipped')),
  skip_reason text CHECK (skip_reason IN ('no_phone', 'do_not_call', 'opted_out')),
  attempts integer NOT NULL DEFAULT 0,
  last_outcome text,
  last_attempt_at timestamptz,
  -- When the dialer may next look at it: a retry's due time, or the next opening of its window.
  next_attempt_at timestamptz NOT NULL,
  -- The call of the attempt in progress; null between attempts.
  current_call_id uuid,
  call_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, campaign_id) REFERENCES sdr_campaigns (org_id, id),
  FOREIGN KEY (org_id, contact_client_id) REFERENCES clients (org_id, id),
  UNIQUE (campaign_id, contact_id)
);
-- The due prospects of a campaign, soonest first: the dialer's claim.
CREATE INDEX sdr_prospects_due ON sdr_prospects (campaign_id, next_attempt_at, id) WHERE status = 'pending';
-- The list of a campaign's prospects (and its status filter).
CREATE INDEX sdr_prospects_list ON sdr_prospects (campaign_id, id DESC);
CREATE INDEX sdr_prospects_status ON sdr_prospects (campaign_id, status, id DESC);
