-- Agents (voice, SMS and business-listing identities of a client) and their slugs. A slug is unique in
-- the org, counting the aliases a rename leaves behind until they expire; phone numbers name the agent
-- that answers them.

CREATE TABLE agents (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  -- The current slug; agent_slugs holds it too, with the aliases, and keeps it unique.
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{2,63}$'),
  kind text NOT NULL CHECK (kind IN ('inbound_voice', 'outbound_voice', 'sms', 'google_my_business')),
  purpose text CHECK (char_length(purpose) <= 64),
  labels text[] NOT NULL DEFAULT '{}' CHECK (cardinality(labels) <= 16),
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'archived')),
  location_label text CHECK (char_length(location_label) <= 80),
  greeting text NOT NULL DEFAULT '' CHECK (char_length(greeting) <= 4000),
  voice_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX agents_org ON agents (org_id, id DESC);
CREATE INDEX agents_tenant ON agents (org_id, client_id, id DESC);

-- Every slug an agent answers to: its current one (expires_at null) and the aliases of past renames.
-- An expired alias is deleted by whoever claims its slug next (and by a daily clean-up), so the unique
-- key is the whole rule: one holder per slug in the org.
CREATE TABLE agent_slugs (
  org_id uuid NOT NULL,
  slug text NOT NULL,
  agent_id uuid NOT NULL REFERENCES agents (id) DEFERRABLE INITIALLY DEFERRED,
  expires_at timestamptz,
  PRIMARY KEY (org_id, slug)
);
CREATE INDEX agent_slugs_agent ON agent_slugs (agent_id);
CREATE INDEX agent_slugs_expiry ON agent_slugs (expires_at) WHERE expires_at IS NOT NULL;

-- The agent that answers a number: an agent of the number's own client.
ALTER TABLE phone_numbers
  ADD COLUMN agent_id uuid,
  ADD FOREIGN KEY (org_id, client_id, agent_id) REFERENCES agents (org_id, client_id, id);

-- Calls are counted by day in the org's time zone; null means UTC.
ALTER TABLE orgs ADD COLUMN timezone text;
