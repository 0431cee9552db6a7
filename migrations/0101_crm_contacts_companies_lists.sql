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

-- A company named in a contact upsert without a usable email domain is matched by name.
CREATE INDEX companies_tenant_name ON companies (org_id, client_id, lower(name));
-- The list filters of GET /crm/contacts that are not served by the tenant index alone.
CREATE INDEX contacts_lifecycle ON contacts (org_id, client_id, lifecycle_stage, id DESC);
