-- Deals, pipelines, activities and tasks: the value checks the API relies on, and the indexes behind
-- the list filters (each keeps the list's own order, so a filtered page is an index range).

ALTER TABLE pipeline_stages ADD CONSTRAINT pipeline_stages_probability
  CHECK (probability IS NULL OR (probability >= 0 AND probability <= 1));

ALTER TABLE deals ADD CONSTRAINT deals_status CHECK (status IN ('open', 'won', 'lost'));
CREATE INDEX deals_pipeline ON deals (org_id, client_id, pipeline_id, id DESC);
CREATE INDEX deals_stage ON deals (org_id, client_id, stage_id, id DESC);
CREATE INDEX deals_company ON deals (org_id, client_id, company_id, id DESC) WHERE company_id IS NOT NULL;
CREATE INDEX deals_primary_contact ON deals (org_id, client_id, primary_contact_id, id DESC)
  WHERE primary_contact_id IS NOT NULL;

ALTER TABLE activities
  ADD FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  ADD CONSTRAINT activities_type CHECK (activity_type IN ('call', 'note', 'email', 'meeting', 'sms', 'task')),
  ADD CONSTRAINT activities_direction CHECK (direction IS NULL OR direction IN ('inbound', 'outbound', 'internal')),
  ADD CONSTRAINT activities_visibility CHECK (visibility IN ('internal', 'public'));
CREATE INDEX activities_contact ON activities (org_id, client_id, contact_id, performed_at DESC, id DESC)
  WHERE contact_id IS NOT NULL;
CREATE INDEX activities_company ON activities (org_id, client_id, company_id, performed_at DESC, id DESC)
  WHERE company_id IS NOT NULL;
CREATE INDEX activities_deal ON activities (org_id, client_id, deal_id, performed_at DESC, id DESC)
  WHERE deal_id IS NOT NULL;

ALTER TABLE tasks
  ADD CONSTRAINT tasks_priority CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  ADD CONSTRAINT tasks_status CHECK (status IN ('open', 'in_progress', 'completed', 'cancelled')),
  ADD CONSTRAINT tasks_completed_at CHECK ((status = 'completed') = (completed_at IS NOT NULL));
CREATE INDEX tasks_assignee ON tasks (org_id, client_id, assignee_user_id, id DESC)
  WHERE assignee_user_id IS NOT NULL;
CREATE INDEX tasks_status ON tasks (org_id, client_id, status, id DESC);
