-- The CRM's tables. Every row leads with (org_id, client_id): the tenant. References between CRM
-- records carry the tenant in the foreign key, so a row can never point into another tenant.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE companies (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL,
  domain text,
  website text,
  industry text,
  business_description text,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE UNIQUE INDEX companies_domain ON companies (org_id, client_id, domain) WHERE domain IS NOT NULL;
CREATE INDEX companies_tenant ON companies (org_id, client_id, id DESC);
CREATE INDEX companies_name_trgm ON companies USING gin (name gin_trgm_ops);

CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  full_name text,
  first_name text,
  last_name text,
  title text,
  lifecycle_stage text,
  company_id uuid,
  owner_user_id uuid,
  tags text[] NOT NULL DEFAULT '{}',
  source text,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  FOREIGN KEY (org_id, client_id, company_id) REFERENCES companies (org_id, client_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX contacts_tenant ON contacts (org_id, client_id, id DESC);
CREATE INDEX contacts_owner ON contacts (org_id, client_id, owner_user_id);
CREATE INDEX contacts_company ON contacts (org_id, client_id, company_id);
-- One trigram index over the three name fields serves `q` on a large tenant.
CREATE INDEX contacts_names_trgm ON contacts
  USING gin ((coalesce(full_name, '') || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '')) gin_trgm_ops);

CREATE TABLE contact_phones (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  phone_e164 text NOT NULL,
  phone_type text NOT NULL DEFAULT 'mobile',
  is_primary boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'unverified',
  consent_status text NOT NULL DEFAULT 'unknown',
  consent_source text,
  consented_at timestamptz,
  dnc_scope text,
  source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, contact_id) REFERENCES contacts (org_id, client_id, id) ON DELETE CASCADE,
  UNIQUE (org_id, client_id, phone_e164)
);
CREATE INDEX contact_phones_contact ON contact_phones (contact_id);
CREATE UNIQUE INDEX contact_phones_one_primary ON contact_phones (contact_id) WHERE is_primary;

CREATE TABLE contact_emails (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  email text NOT NULL,
  is_primary boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'unverified',
  source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, contact_id) REFERENCES contacts (org_id, client_id, id) ON DELETE CASCADE,
  UNIQUE (org_id, client_id, email),
  CHECK (email = lower(email))
);
CREATE INDEX contact_emails_contact ON contact_emails (contact_id);
CREATE UNIQUE INDEX contact_emails_one_primary ON contact_emails (contact_id) WHERE is_primary;

CREATE TABLE pipelines (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE UNIQUE INDEX pipelines_one_default ON pipelines (org_id, client_id) WHERE is_default;

CREATE TABLE pipeline_stages (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  pipeline_id uuid NOT NULL,
  name text NOT NULL,
  position integer NOT NULL,
  probability numeric,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, pipeline_id) REFERENCES pipelines (org_id, client_id, id) ON DELETE CASCADE,
  UNIQUE (pipeline_id, position),
  UNIQUE (pipeline_id, id)
);

CREATE TABLE deals (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL,
  amount numeric,
  currency text NOT NULL DEFAULT 'USD',
  pipeline_id uuid NOT NULL,
  stage_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'open',
  owner_user_id uuid,
  primary_contact_id uuid,
  company_id uuid,
  expected_close_date date,
  tags text[] NOT NULL DEFAULT '{}',
  custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb,
  archived_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, pipeline_id) REFERENCES pipelines (org_id, client_id, id),
  FOREIGN KEY (pipeline_id, stage_id) REFERENCES pipeline_stages (pipeline_id, id),
  FOREIGN KEY (org_id, client_id, primary_contact_id) REFERENCES contacts (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, company_id) REFERENCES companies (org_id, client_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX deals_tenant ON deals (org_id, client_id, id DESC);

CREATE TABLE activities (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  activity_type text NOT NULL,
  direction text,
  contact_id uuid,
  company_id uuid,
  deal_id uuid,
  subject text,
  body text,
  outcome text,
  duration_seconds integer,
  pinned boolean NOT NULL DEFAULT false,
  visibility text NOT NULL DEFAULT 'internal',
  performed_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id, contact_id) REFERENCES contacts (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, company_id) REFERENCES companies (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, deal_id) REFERENCES deals (org_id, client_id, id)
);
CREATE INDEX activities_timeline ON activities (org_id, client_id, performed_at DESC, id DESC);

CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  title text NOT NULL,
  body text,
  task_type text NOT NULL DEFAULT 'todo',
  priority text NOT NULL DEFAULT 'normal',
  assignee_user_id uuid,
  contact_id uuid,
  company_id uuid,
  deal_id uuid,
  due_at timestamptz,
  status text NOT NULL DEFAULT 'open',
  completed_at timestamptz,
  reminded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  FOREIGN KEY (org_id, client_id, contact_id) REFERENCES contacts (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, company_id) REFERENCES companies (org_id, client_id, id),
  FOREIGN KEY (org_id, client_id, deal_id) REFERENCES deals (org_id, client_id, id)
);
CREATE INDEX tasks_tenant ON tasks (org_id, client_id, id DESC);
-- The reminder job scans only open tasks that have not been reminded yet.
CREATE INDEX tasks_due_unreminded ON tasks (due_at) WHERE reminded_at IS NULL AND status IN ('open', 'in_progress') AND due_at IS NOT NULL;

CREATE TABLE crm_lists (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL,
  description text,
  processing_type text NOT NULL DEFAULT 'static',
  filter_branch jsonb,
  exclude_dnc boolean NOT NULL DEFAULT false,
  exclude_unsubscribed boolean NOT NULL DEFAULT false,
  exclude_archived boolean NOT NULL DEFAULT true,
  emit_flow_triggers boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX crm_lists_tenant ON crm_lists (org_id, client_id, id DESC);

CREATE TABLE crm_list_members (
  list_id uuid NOT NULL REFERENCES crm_lists (id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  entity_type text NOT NULL,
  entity_id uuid NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (list_id, entity_id)
);
