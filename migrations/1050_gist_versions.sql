-- A gist cache hit becomes a key read (issue 25): each subject someone asked a gist of has a source
-- version, bumped in the transaction of every write to a row its gist reads (the triggers below), and a
-- ready gist carries the version it is known to match. A hit is then the version row and the gist of
-- that version, by key, instead of rebuilding the source and hashing it.

CREATE TABLE gist_versions (
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  subject_type text NOT NULL CHECK (subject_type IN ('contact', 'company', 'deal')),
  subject_id uuid NOT NULL,
  version bigint NOT NULL DEFAULT 0,
  -- The xmax of a snapshot taken once this row was committed: every writer that could have bumped
  -- nothing because the row did not exist yet has an xid below it (see src/modules/ai/store.ts).
  -- NULL until then: no snapshot is safe.
  created_xmax xid8,
  PRIMARY KEY (org_id, client_id, subject_type, subject_id),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id)
);
COMMENT ON TABLE gist_versions IS 'tenant: the source version of each record of one client someone asked a gist of';

-- The version of the source the gist is known to have been written from (NULL: not known).
ALTER TABLE gists ADD COLUMN source_version bigint;
CREATE INDEX gists_by_version ON gists (org_id, client_id, subject_type, subject_id, generator, source_version, generated_at DESC)
  WHERE status = 'ready' AND source_version IS NOT NULL;

-- What a written row is part of, as the subjects (org_id, client_id, subject_type, subject_id) whose gist
-- source it can appear in: read from the SQL pieces the gist source is made of (src/modules/ai/store.ts
-- `SOURCES`). More than needed is harmless (a bump with an unchanged source is still a free hit, by hash).

-- A contact is in its own gist, its company's (the company's people) and its deals' (primary contact).
CREATE FUNCTION gist_subjects_of_contact(org uuid, client uuid, contact uuid, company uuid)
RETURNS TABLE (org_id uuid, client_id uuid, subject_type text, subject_id uuid) LANGUAGE sql STABLE AS $$
  SELECT org, client, 'contact', contact
  UNION ALL
  SELECT org, client, 'company', company WHERE company IS NOT NULL
  UNION ALL
  SELECT d.org_id, d.client_id, 'deal', d.id FROM deals d
    WHERE d.org_id = org AND d.client_id = client AND d.primary_contact_id = contact
$$;

-- A phone or an email is in its contact's gist, and so wherever its contact is.
CREATE FUNCTION gist_subjects_of_channel(org uuid, client uuid, contact uuid)
RETURNS TABLE (org_id uuid, client_id uuid, subject_type text, subject_id uuid) LANGUAGE sql STABLE AS $$
  SELECT s.* FROM contacts c, gist_subjects_of_contact(c.org_id, c.client_id, c.id, c.company_id) s
    WHERE c.org_id = org AND c.client_id = client AND c.id = contact
$$;

-- A company is in its own gist, its contacts' (their company) and its deals'.
CREATE FUNCTION gist_subjects_of_company(org uuid, client uuid, company uuid)
RETURNS TABLE (org_id uuid, client_id uuid, subject_type text, subject_id uuid) LANGUAGE sql STABLE AS $$
  SELECT org, client, 'company', company
  UNION ALL
  SELECT c.org_id, c.client_id, 'contact', c.id FROM contacts c
    WHERE c.org_id = org AND c.client_id = client AND c.company_id = company
  UNION ALL
  SELECT d.org_id, d.client_id, 'deal', d.id FROM deals d
    WHERE d.org_id = org AND d.client_id = client AND d.company_id = company
$$;

-- A deal, an activity or a task is in the gists of the record itself (a deal) and of the contact,
-- company and deal it names (a deal's contact is its primary contact).
CREATE FUNCTION gist_subjects_of_links(org uuid, client uuid, contact uuid, company uuid, deal uuid)
RETURNS TABLE (org_id uuid, client_id uuid, subject_type text, subject_id uuid) LANGUAGE sql IMMUTABLE AS $$
  SELECT org, client, s.subject_type, s.subject_id
  FROM (VALUES ('contact', contact), ('company', company), ('deal', deal)) s (subject_type, subject_id)
  WHERE s.subject_id IS NOT NULL
$$;

-- One row trigger per written table. A write in a client nobody asked a gist of (the common case: a
-- contact created through the API) pays one index probe of gist_versions and nothing else; the first
-- version of this migration ran statement triggers with transition tables, which cost a contact create
-- about a quarter of its throughput whether or not the client used gists. In a client that does, each
-- row runs ONE update of the version rows of the subjects it is part of, before and after the write.

CREATE FUNCTION gist_versions_bump_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM gist_versions v
                 WHERE v.org_id = coalesce(NEW.org_id, OLD.org_id)
                   AND v.client_id = coalesce(NEW.client_id, OLD.client_id)) THEN
    RETURN NULL;
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM gist_subjects_of_contact(OLD.org_id, OLD.client_id, OLD.id, OLD.company_id) s WHERE TG_OP <> 'INSERT'
    UNION
    SELECT s.* FROM gist_subjects_of_contact(NEW.org_id, NEW.client_id, NEW.id, NEW.company_id) s WHERE TG_OP <> 'DELETE');
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_contact_channels() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM gist_versions v
                 WHERE v.org_id = coalesce(NEW.org_id, OLD.org_id)
                   AND v.client_id = coalesce(NEW.client_id, OLD.client_id)) THEN
    RETURN NULL;
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM gist_subjects_of_channel(OLD.org_id, OLD.client_id, OLD.contact_id) s WHERE TG_OP <> 'INSERT'
    UNION
    SELECT s.* FROM gist_subjects_of_channel(NEW.org_id, NEW.client_id, NEW.contact_id) s WHERE TG_OP <> 'DELETE');
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_companies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM gist_versions v
                 WHERE v.org_id = coalesce(NEW.org_id, OLD.org_id)
                   AND v.client_id = coalesce(NEW.client_id, OLD.client_id)) THEN
    RETURN NULL;
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM gist_subjects_of_company(OLD.org_id, OLD.client_id, OLD.id) s WHERE TG_OP <> 'INSERT'
    UNION
    SELECT s.* FROM gist_subjects_of_company(NEW.org_id, NEW.client_id, NEW.id) s WHERE TG_OP <> 'DELETE');
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_deals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM gist_versions v
                 WHERE v.org_id = coalesce(NEW.org_id, OLD.org_id)
                   AND v.client_id = coalesce(NEW.client_id, OLD.client_id)) THEN
    RETURN NULL;
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM gist_subjects_of_links(OLD.org_id, OLD.client_id, OLD.primary_contact_id, OLD.company_id, OLD.id) s WHERE TG_OP <> 'INSERT'
    UNION
    SELECT s.* FROM gist_subjects_of_links(NEW.org_id, NEW.client_id, NEW.primary_contact_id, NEW.company_id, NEW.id) s WHERE TG_OP <> 'DELETE');
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_activities_and_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM gist_versions v
                 WHERE v.org_id = coalesce(NEW.org_id, OLD.org_id)
                   AND v.client_id = coalesce(NEW.client_id, OLD.client_id)) THEN
    RETURN NULL;
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM gist_subjects_of_links(OLD.org_id, OLD.client_id, OLD.contact_id, OLD.company_id, OLD.deal_id) s WHERE TG_OP <> 'INSERT'
    UNION
    SELECT s.* FROM gist_subjects_of_links(NEW.org_id, NEW.client_id, NEW.contact_id, NEW.company_id, NEW.deal_id) s WHERE TG_OP <> 'DELETE');
  RETURN NULL;
END $$;
-- A pipeline's or a stage's name is in the gist of every deal at it and of their contacts and
-- companies; renames are rare, so every version row of the client is bumped.
CREATE FUNCTION gist_versions_bump_client() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id) IN (SELECT n.org_id, n.client_id FROM new_rows n
                                    JOIN old_rows o ON o.org_id = n.org_id AND o.id = n.id
                                    WHERE o.name IS DISTINCT FROM n.name);
  RETURN NULL;
END $$;

CREATE TRIGGER contacts_gist AFTER INSERT OR UPDATE OR DELETE ON contacts
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_contacts();
CREATE TRIGGER contact_phones_gist AFTER INSERT OR UPDATE OR DELETE ON contact_phones
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_contact_channels();
CREATE TRIGGER contact_emails_gist AFTER INSERT OR UPDATE OR DELETE ON contact_emails
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_contact_channels();
CREATE TRIGGER companies_gist AFTER INSERT OR UPDATE OR DELETE ON companies
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_companies();
CREATE TRIGGER deals_gist AFTER INSERT OR UPDATE OR DELETE ON deals
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_deals();
CREATE TRIGGER activities_gist AFTER INSERT OR UPDATE OR DELETE ON activities
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_activities_and_tasks();
CREATE TRIGGER tasks_gist AFTER INSERT OR UPDATE OR DELETE ON tasks
  FOR EACH ROW EXECUTE FUNCTION gist_versions_bump_activities_and_tasks();
CREATE TRIGGER pipelines_gist_rename AFTER UPDATE ON pipelines
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_client();
CREATE TRIGGER pipeline_stages_gist_rename AFTER UPDATE ON pipeline_stages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_client();
