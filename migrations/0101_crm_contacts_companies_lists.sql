-- Contacts, companies and lists: the closed value sets of SPEC.md enforced by the database too, and the
-- indexes the API's lookups need.

ALTER TABLE contact_phones
  ADD CONSTRAINT contact_phones_phone_type CHECK (phone_type IN ('mobile', 'work', 'home', 'other')),
  ADD CONSTRAINT contact_phones_status CHECK (status IN ('unverified', 'verified', 'invalid')),
  ADD CONSTRAINT contact_phones_consent_status
    CHECK (consent_status IN ('unknown', 'opt_in', 'opt_out', 'do_not_call')),
  ADD CONSTRAINT contact_phones_dnc_scope CHECK (dnc_scope IN ('individual', 'company', 'global'));

ALTER TABLE contact_emails
  ADD CONSTRAINT contact_emails_status CHECK (status IN ('unverified', 'verified', 'bounced'));

ALTER TABLE crm_lists
  ADD CONSTRAINT crm_lists_processing_type CHECK (processing_type IN ('static', 'smart')),
  ADD CONSTRAINT crm_lists_filter_only_smart CHECK ((processing_type = 'smart') = (filter_branch IS NOT NULL));

ALTER TABLE crm_list_members
  ADD CONSTRAINT crm_list_members_entity_type CHECK (entity_type IN ('contact', 'company', 'deal'));

-- A contact's primary email and phone, mirrored from contact_emails / contact_phones (where
-- is_primary is the truth) by every write that changes them, so that reading a contact is one row.
ALTER TABLE contacts ADD COLUMN primary_email text, ADD COLUMN primary_phone text;
UPDATE contacts c SET
  primary_email = (SELECT email FROM contact_emails e WHERE e.contact_id = c.id AND e.is_primary),
  primary_phone = (SELECT phone_e164 FROM contact_phones p WHERE p.contact_id = c.id AND p.is_primary);

-- The unique constraints on (org_id, client_id, id) already serve tenant scans in either direction;
-- a second index on the same columns only slows every insert.
DROP INDEX contacts_tenant;
DROP INDEX companies_tenant;
DROP INDEX crm_lists_tenant;

-- Most contacts have no owner or no company: partial indexes keep the NULLs out (every new contact
-- would otherwise add an entry to both, all on the same page), and end with id for the list order.
DROP INDEX contacts_owner;
CREATE INDEX contacts_owner ON contacts (org_id, client_id, owner_user_id, id DESC) WHERE owner_user_id IS NOT NULL;
DROP INDEX contacts_company;
CREATE INDEX contacts_company ON contacts (org_id, client_id, company_id, id DESC) WHERE company_id IS NOT NULL;

-- Finer statistics on the names expression, so that the planner sees how rare a `q` substring is
-- and picks the trigram index for rare ones (and the id-ordered scan for common ones).
ALTER INDEX contacts_names_trgm ALTER COLUMN 1 SET STATISTICS 1000;

-- A company named in a contact upsert without a usable email domain is matched by name.
CREATE INDEX companies_tenant_name ON companies (org_id, client_id, lower(name));
