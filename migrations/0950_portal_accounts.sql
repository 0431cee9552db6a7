-- The portal's people: users of an org, their sessions, invitation and reset links, and the audit log.
-- Secrets that arrive without a tenant (a session cookie, a link's token) are looked up by the SHA-256
-- of a 256-bit random token; the tables keyed by them are local (see each COMMENT).

CREATE TABLE users (
  org_id uuid NOT NULL REFERENCES orgs (id),
  id uuid NOT NULL,
  email text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'client')),
  client_id uuid,
  status text NOT NULL DEFAULT 'invited' CHECK (status IN ('invited', 'active', 'disabled')),
  -- argon2id, PHC string; null until the invitation is accepted.
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz,
  PRIMARY KEY (org_id, id),
  UNIQUE (org_id, email),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  CHECK ((role = 'client') = (client_id IS NOT NULL))
);
CREATE INDEX users_owners ON users (org_id) WHERE role = 'owner';
COMMENT ON TABLE users IS 'tenant: the people of one org; distributed by org_id';

-- A person signs in with an email alone, so an email belongs to one user of the whole platform.
CREATE TABLE user_emails (
  email text PRIMARY KEY,
  org_id uuid NOT NULL,
  user_id uuid NOT NULL
);
COMMENT ON TABLE user_emails IS
  'local: the platform-wide email → (org_id, user_id) lookup of sign-in, which arrives without a tenant; '
  'no foreign key (a local table cannot reference a distributed one); the users service writes both in one transaction';

CREATE TABLE portal_sessions (
  -- SHA-256 of the cookie's random token: the token itself is never stored.
  token_hash bytea PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  org_id uuid NOT NULL,
  user_id uuid NOT NULL,
  ip text,
  user_agent text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Slides forward as the session is used (at most once a minute); idle expiry counts from it.
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  -- The absolute end, whatever the use.
  expires_at timestamptz NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (org_id, user_id);
CREATE INDEX portal_sessions_expires ON portal_sessions (expires_at);
COMMENT ON TABLE portal_sessions IS
  'local: looked up by the cookie token''s hash, which arrives without a tenant; rows are small and short-lived';

CREATE TABLE user_tokens (
  -- SHA-256 of the link's random token.
  token_hash bytea PRIMARY KEY,
  purpose text NOT NULL CHECK (purpose IN ('invitation', 'reset')),
  org_id uuid NOT NULL,
  user_id uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_tokens_user ON user_tokens (org_id, user_id);
COMMENT ON TABLE user_tokens IS
  'local: single-use invitation and password-reset links, looked up by the token''s hash, which arrives without a tenant';

CREATE TABLE audit_log (
  org_id uuid NOT NULL REFERENCES orgs (id),
  id uuid NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'operator')),
  -- The user's or the key's id; null for the operator (ADMIN_TOKEN).
  actor_id uuid,
  -- Who it was, as it read then: the user's email, the key's name and prefix, "operator".
  actor_label text NOT NULL,
  action text NOT NULL,
  record_type text NOT NULL,
  record_id text NOT NULL,
  -- The client the record belongs to, when it belongs to one.
  client_id uuid,
  ip text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
CREATE INDEX audit_log_record ON audit_log (org_id, record_type, record_id, id DESC);
CREATE INDEX audit_log_action ON audit_log (org_id, action, id DESC);
COMMENT ON TABLE audit_log IS 'tenant: append-only record of changes to keys, clients, users and webhooks of one org';

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
