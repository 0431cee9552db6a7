-- SMS conversations and messages, both directions. An outbound message is accepted `queued` (its FUEL
-- debited in the same transaction) and sent after commit by a worker loop that claims it under a lease;
-- delivery reports (the simulator's, held on the message until due) are claimed the same way.

CREATE TABLE sms_conversations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  -- The client's number (E.164) and the remote party's number.
  our_number text NOT NULL,
  phone_number text NOT NULL,
  contact_id uuid,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  last_message_at timestamptz(3),
  unread_count integer NOT NULL DEFAULT 0,
  total_messages integer NOT NULL DEFAULT 0,
  provider text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, our_number, phone_number)
);
-- Most recent activity first (never-messaged conversations last), and the filters.
CREATE INDEX sms_conversations_recent ON sms_conversations (org_id, client_id, last_message_at DESC, id DESC);
CREATE INDEX sms_conversations_contact ON sms_conversations (org_id, client_id, contact_id)
  WHERE contact_id IS NOT NULL;
CREATE INDEX sms_conversations_unread ON sms_conversations (org_id, client_id, last_message_at DESC, id DESC)
  WHERE unread_count > 0;

CREATE TABLE sms_messages (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  conversation_id uuid NOT NULL REFERENCES sms_conversations (id),
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  from_number text NOT NULL,
  to_number text NOT NULL,
  body text NOT NULL,
  media_urls text[] NOT NULL DEFAULT '{}',
  segments integer NOT NULL,
  encoding text NOT NULL,
  fuel_cost integer NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN
    ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'received')),
  error_code text,
  contact_id uuid,
  company_id uuid,
  deal_id uuid,
  provider text NOT NULL,
  provider_message_id text,
  provider_error_code text,
  -- Outbound only: the cause that asked for the message (one message per cause in the org).
  cause_key text,
  -- Outbound only: `pending` until a worker has handed it to the provider (or given it up); while
  -- pending, `send_after` is when it may be claimed (now for a new one, the lease's end for a claimed one).
  -- `unconfirmed`: the send failed in a way that may have reached the carrier; its status callback
  -- settles it, or it fails at `send_after`.
  send_state text CHECK (send_state IN ('pending', 'done', 'unconfirmed')),
  send_after timestamptz,
  send_attempts integer NOT NULL DEFAULT 0,
  -- A provider status report held until it is due (the simulator's delivery report), then claimed.
  report jsonb,
  report_after timestamptz,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  sent_at timestamptz,
  delivered_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, cause_key),
  UNIQUE (provider, provider_message_id)
);
CREATE INDEX sms_messages_conversation ON sms_messages (conversation_id, id DESC);
CREATE INDEX sms_messages_send_due ON sms_messages (send_after) WHERE send_state = 'pending';
-- Sends that may have reached the carrier, awaiting their status callback until `send_after`.
CREATE INDEX sms_messages_unconfirmed ON sms_messages (send_after) WHERE send_state = 'unconfirmed';
CREATE INDEX sms_messages_report_due ON sms_messages (report_after) WHERE report_after IS NOT NULL;
