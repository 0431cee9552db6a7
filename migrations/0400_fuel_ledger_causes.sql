-- FUEL ledger entries name their cause, so a debit or refund per cause happens exactly once.
-- `reason` becomes a closed set; the operator's free text of a grant moves to `note`.

ALTER TABLE fuel_ledger
  ADD COLUMN client_id uuid,
  ADD COLUMN reference_type text,
  ADD COLUMN reference_id text,
  ADD COLUMN note text;

UPDATE fuel_ledger
SET note = reason,
    reason = CASE WHEN amount > 0 THEN 'grant' ELSE 'adjustment' END,
    reference_type = 'admin_grant';

ALTER TABLE fuel_ledger
  ALTER COLUMN reason SET NOT NULL,
  ADD CONSTRAINT fuel_ledger_reason CHECK (reason IN ('grant', 'adjustment', 'sms', 'gist', 'refund')),
  ADD CONSTRAINT fuel_ledger_amount CHECK (amount <> 0),
  ADD CONSTRAINT fuel_ledger_client_fk FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);

-- The exactly-once key: a second debit or refund of the same cause conflicts here and is skipped.
-- Grants carry no reference_id, and NULLs never conflict, so each grant is its own entry.
-- reference_type and reference_id lead, so a refund finds the debit it returns by its cause.
CREATE UNIQUE INDEX fuel_ledger_cause ON fuel_ledger (org_id, reference_type, reference_id, reason);

-- Lists are newest first by UUIDv7 id, for the whole org and for one client.
DROP INDEX fuel_ledger_org;
CREATE INDEX fuel_ledger_org ON fuel_ledger (org_id, id DESC);
CREATE INDEX fuel_ledger_client ON fuel_ledger (org_id, client_id, id DESC);
