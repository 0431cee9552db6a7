-- Sequences: ladders of SMS and email steps, the contacts enrolled in them, and one row per step sent.
-- A step is sent at most once per enrollment: sequence_step_sends has the (enrollment, step) primary key,
-- and the row is written in the transaction that advances the enrollment past the step.

CREATE TABLE sequences (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  description text,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'archived')),
  -- [{kind, wait_minutes, body, subject?}], at most 50, validated by the service.
  steps jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array' AND jsonb_array_length(steps) <= 50),
  sender_user_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX sequences_tenant ON sequences (org_id, client_id, id DESC);

CREATE TABLE sequence_enrollments (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  sequence_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  current_step integer NOT NULL DEFAULT 0 CHECK (current_step >= 0),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'completed', 'cancelled')),
  -- Why it stopped: reply_received, manual, sequence_archived, opted_out, missing_phone, missing_email,
  -- fuel_exhausted, unsubscribed, ... Null while active.
  paused_reason text,
  next_run_at timestamptz NOT NULL,
  enrolled_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  last_step_at timestamptz,
  metadata jsonb NOT NULL DEFAULT '{}',
  -- A worker running the current step holds it until then; after that another worker may take it over.
  claimed_until timestamptz,
  -- Failed attempts at the current step (a deferred email, an unexpected error); reset when it advances.
  attempts integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, sequence_id) REFERENCES sequences (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, contact_id) REFERENCES contacts (org_id, client_id, id)
);
-- One active enrollment of a contact in a sequence, ever: concurrent enrollments meet here.
CREATE UNIQUE INDEX sequence_enrollments_active_contact ON sequence_enrollments (sequence_id, contact_id)
  WHERE status = 'active';
CREATE INDEX sequence_enrollments_sequence ON sequence_enrollments (sequence_id, id DESC);
-- What the tick claims: active enrollments by due time.
CREATE INDEX sequence_enrollments_due ON sequence_enrollments (next_run_at) WHERE status = 'active';
-- A reply or an unsubscribe stops a contact's active enrollments.
CREATE INDEX sequence_enrollments_contact ON sequence_enrollments (org_id, client_id, contact_id)
  WHERE status = 'active';

CREATE TABLE sequence_step_sends (
  enrollment_id uuid NOT NULL REFERENCES sequence_enrollments (id),
  step_index integer NOT NULL,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sms', 'email')),
  -- `sequence_step:<enrollment>:<step>`: the cause key of the SMS, the key of the email.
  cause_key text NOT NULL UNIQUE,
  -- The SMS message id, or the email's Message-ID.
  message_ref text NOT NULL,
  to_address text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (enrollment_id, step_index)
);

-- Email addresses that used a sequence email's one-click unsubscribe, per client.
CREATE TABLE sequence_email_unsubscribes (
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  email text NOT NULL CHECK (email = lower(email)),
  enrollment_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, client_id, email)
);
