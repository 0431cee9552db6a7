-- Sequences that follow a CRM list (issue 26): a sequence names a list; its members are enrolled while
-- the sequence is active, and a member that leaves has the enrollment the list gave it cancelled.

ALTER TABLE sequences
  ADD COLUMN list_id uuid,
  -- The list's updated_at the membership below reflects; NULL: the whole list must be synced again
  -- (just linked, re-activated, or the list changed since).
  ADD COLUMN list_synced_version timestamptz,
  ADD CONSTRAINT sequences_list_fkey FOREIGN KEY (org_id, list_id)
    REFERENCES crm_lists (org_id, id) ON DELETE SET NULL (list_id);

CREATE INDEX sequences_following_list ON sequences (org_id, client_id)
  WHERE list_id IS NOT NULL AND status = 'active';
CREATE INDEX sequences_list ON sequences (org_id, list_id) WHERE list_id IS NOT NULL;

-- Who a sequence counts as a member of its list, as of its last look: a row inserted is a join (the
-- one insert that wins enrolls), a row deleted is a leave (the one delete cancels `enrollment_id`).
CREATE TABLE sequence_list_members (
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  sequence_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  -- The enrollment this join made; NULL when the contact was actively enrolled already.
  enrollment_id uuid,
  list_id uuid NOT NULL,
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, sequence_id, contact_id),
  FOREIGN KEY (org_id, sequence_id) REFERENCES sequences (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, contact_id) REFERENCES contacts (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, enrollment_id) REFERENCES sequence_enrollments (org_id, id)
);
COMMENT ON TABLE sequence_list_members IS 'tenant: the members of its list a sequence has seen join';
CREATE INDEX sequence_list_members_contact ON sequence_list_members (org_id, contact_id);

-- Contacts whose membership of a list may have changed, written in the transaction of the change by
-- the triggers below (so every write path, present and future, marks), only in a client with an
-- active sequence that follows a list. Append-only: marking never waits for the pass that reads them.
CREATE TABLE sequence_list_marks (
  org_id uuid NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  client_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  marked_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);
COMMENT ON TABLE sequence_list_marks IS 'tenant: contacts to look at again for the sequences that follow lists';
CREATE INDEX sequence_list_marks_order ON sequence_list_marks (id);

-- Statement-level: one insert per written statement (a bulk add of 100 members is one), reading the
-- written rows from the transition table `changed`.
CREATE FUNCTION sequence_list_mark_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
  SELECT DISTINCT r.org_id, r.client_id, r.id FROM changed r
  WHERE EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = r.org_id AND s.client_id = r.client_id
                  AND s.list_id IS NOT NULL AND s.status = 'active');
  RETURN NULL;
END $$;

CREATE FUNCTION sequence_list_mark_channels() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
  SELECT DISTINCT r.org_id, r.client_id, r.contact_id FROM changed r
  WHERE EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = r.org_id AND s.client_id = r.client_id
                  AND s.list_id IS NOT NULL AND s.status = 'active');
  RETURN NULL;
END $$;

CREATE FUNCTION sequence_list_mark_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
  SELECT DISTINCT r.org_id, r.client_id, r.entity_id FROM changed r
  WHERE r.entity_type = 'contact'
    AND EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = r.org_id AND s.client_id = r.client_id
                  AND s.list_id IS NOT NULL AND s.status = 'active');
  RETURN NULL;
END $$;

-- A company's name, domain or industry (fields a smart list may filter on) marks its contacts.
CREATE FUNCTION sequence_list_mark_company() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sequence_list_marks (org_id, client_id, contact_id)
  SELECT c.org_id, c.client_id, c.id FROM contacts c
  WHERE c.org_id = NEW.org_id AND c.client_id = NEW.client_id AND c.company_id = NEW.id
    AND EXISTS (SELECT 1 FROM sequences s WHERE s.org_id = NEW.org_id AND s.client_id = NEW.client_id
                  AND s.list_id IS NOT NULL AND s.status = 'active');
  RETURN NULL;
END $$;

CREATE TRIGGER contacts_list_mark_insert AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_contacts();
CREATE TRIGGER contacts_list_mark_update AFTER UPDATE ON contacts
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_contacts();
CREATE TRIGGER contact_phones_list_mark_insert AFTER INSERT ON contact_phones
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER contact_phones_list_mark_update AFTER UPDATE ON contact_phones
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER contact_phones_list_mark_delete AFTER DELETE ON contact_phones
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER contact_emails_list_mark_insert AFTER INSERT ON contact_emails
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER contact_emails_list_mark_update AFTER UPDATE ON contact_emails
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER contact_emails_list_mark_delete AFTER DELETE ON contact_emails
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_channels();
CREATE TRIGGER crm_list_members_list_mark_insert AFTER INSERT ON crm_list_members
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_members();
CREATE TRIGGER crm_list_members_list_mark_delete AFTER DELETE ON crm_list_members
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION sequence_list_mark_members();
CREATE TRIGGER companies_list_mark AFTER UPDATE OF name, domain, industry ON companies
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.domain IS DISTINCT FROM NEW.domain
                     OR OLD.industry IS DISTINCT FROM NEW.industry)
  EXECUTE FUNCTION sequence_list_mark_company();
