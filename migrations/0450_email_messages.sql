-- Emails the email provider sent, or is sending, one row per cause. The primary key is the caller's key (say an
-- enrollment and a step), so a second send of the same cause finds the row and sends nothing, whichever
-- provider is active and whichever process asks. Under EMAIL_PROVIDER=simulator the rows are the "sent" mail
-- that GET /admin/v1/simulator/emails lists.
CREATE TABLE email_messages (
  key text PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 500),
  provider text NOT NULL CHECK (provider IN ('simulator', 'smtp')),
  -- `sending`: claimed by a process that is talking to the SMTP server now (or died doing so: a claim older
  -- than a few minutes is taken over). `sent`: accepted by the server, or recorded by the simulator.
  status text NOT NULL CHECK (status IN ('sending', 'sent')),
  message_id text NOT NULL,
  from_address text NOT NULL,
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text,
  headers jsonb NOT NULL DEFAULT '{}',
  claimed_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The simulator listing, newest first: all mail, or one recipient's.
CREATE INDEX email_messages_to ON email_messages (lower(to_address), created_at DESC);
CREATE INDEX email_messages_created ON email_messages (created_at DESC);
