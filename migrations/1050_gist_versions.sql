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

-- One function per written table, run by one statement-level trigger per event (transition tables
-- allow one event per trigger): the rows written, before and after, and ONE update of the version rows
-- of their subjects. Only subjects someone asked a gist of have a row, so a write nobody gists pays
-- index probes only. A generic plan: with the rows as an array parameter, the planner would otherwise
-- plan each run afresh (a custom plan looks cheaper for one row), five times the cost of running it.

CREATE FUNCTION gist_versions_bump_contacts() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed contacts[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r, gist_subjects_of_contact(r.org_id, r.client_id, r.id, r.company_id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_contact_phones() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed contact_phones[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r, gist_subjects_of_channel(r.org_id, r.client_id, r.contact_id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_contact_emails() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed contact_emails[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r, gist_subjects_of_channel(r.org_id, r.client_id, r.contact_id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_companies() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed companies[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r, gist_subjects_of_company(r.org_id, r.client_id, r.id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_deals() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed deals[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r,
      gist_subjects_of_links(r.org_id, r.client_id, r.primary_contact_id, r.company_id, r.id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_activities() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed activities[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r,
      gist_subjects_of_links(r.org_id, r.client_id, r.contact_id, r.company_id, r.deal_id) s);
  RETURN NULL;
END $$;

CREATE FUNCTION gist_versions_bump_tasks() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  changed tasks[];
BEGIN
  IF TG_OP = 'INSERT' THEN changed := ARRAY(SELECT n FROM new_rows n);
  ELSIF TG_OP = 'DELETE' THEN changed := ARRAY(SELECT o FROM old_rows o);
  ELSE changed := ARRAY(SELECT o FROM old_rows o UNION ALL SELECT n FROM new_rows n);
  END IF;
  UPDATE gist_versions v SET version = v.version + 1
  WHERE (v.org_id, v.client_id, v.subject_type, v.subject_id) IN (
    SELECT s.* FROM unnest(changed) r,
      gist_subjects_of_links(r.org_id, r.client_id, r.contact_id, r.company_id, r.deal_id) s);
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

CREATE TRIGGER contacts_gist_insert AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contacts();
CREATE TRIGGER contacts_gist_update AFTER UPDATE ON contacts
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contacts();
CREATE TRIGGER contacts_gist_delete AFTER DELETE ON contacts
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contacts();
CREATE TRIGGER contact_phones_gist_insert AFTER INSERT ON contact_phones
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_phones();
CREATE TRIGGER contact_phones_gist_update AFTER UPDATE ON contact_phones
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_phones();
CREATE TRIGGER contact_phones_gist_delete AFTER DELETE ON contact_phones
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_phones();
CREATE TRIGGER contact_emails_gist_insert AFTER INSERT ON contact_emails
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_emails();
CREATE TRIGGER contact_emails_gist_update AFTER UPDATE ON contact_emails
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_emails();
CREATE TRIGGER contact_emails_gist_delete AFTER DELETE ON contact_emails
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_contact_emails();
CREATE TRIGGER companies_gist_insert AFTER INSERT ON companies
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_companies();
CREATE TRIGGER companies_gist_update AFTER UPDATE ON companies
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_companies();
CREATE TRIGGER companies_gist_delete AFTER DELETE ON companies
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_companies();
CREATE TRIGGER deals_gist_insert AFTER INSERT ON deals
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_deals();
CREATE TRIGGER deals_gist_update AFTER UPDATE ON deals
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_deals();
CREATE TRIGGER deals_gist_delete AFTER DELETE ON deals
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_deals();
CREATE TRIGGER activities_gist_insert AFTER INSERT ON activities
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_activities();
CREATE TRIGGER activities_gist_update AFTER UPDATE ON activities
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_activities();
CREATE TRIGGER activities_gist_delete AFTER DELETE ON activities
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_activities();
CREATE TRIGGER tasks_gist_insert AFTER INSERT ON tasks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_tasks();
CREATE TRIGGER tasks_gist_update AFTER UPDATE ON tasks
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_tasks();
CREATE TRIGGER tasks_gist_delete AFTER DELETE ON tasks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_tasks();
CREATE TRIGGER pipelines_gist_rename AFTER UPDATE ON pipelines
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_client();
CREATE TRIGGER pipeline_stages_gist_rename AFTER UPDATE ON pipeline_stages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gist_versions_bump_client();
