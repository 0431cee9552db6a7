-- AI jobs: pre-call briefs and lead enrichments, asked for over the API and run by a worker loop.
-- A job is debited its FUEL in the transaction that creates it (the job's id is the debit's cause) and
-- refunded, once, if it fails. The loop is a leased loop (src/platform/jobs/leased.ts): `lease_id`
-- fencing token, `lease_until` (when the job may next be claimed: now for a new job, NULL once it
-- ended), `attempts` counted at claim. A worker that dies mid-job leaves the job to be claimed again
-- once its lease is over.

CREATE TABLE ai_jobs (
  org_id uuid NOT NULL,
  id uuid NOT NULL,
  client_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('precall_brief', 'lead_enrichment')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  subject_type text NOT NULL CHECK (subject_type IN ('contact', 'company')),
  subject_id uuid NOT NULL,
  -- What was asked: a brief's purpose, an enrichment's apply flag.
  input jsonb NOT NULL DEFAULT '{}',
  result jsonb,
  error_code text,
  error_message text,
  fuel_cost integer NOT NULL CHECK (fuel_cost >= 0),
  metadata jsonb NOT NULL DEFAULT '{}',
  lease_id uuid,
  lease_until timestamptz DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  CHECK ((status IN ('completed', 'failed')) = (completed_at IS NOT NULL)),
  CHECK ((status = 'failed') = (error_code IS NOT NULL))
);

-- The loop's claim: jobs still to do, oldest due first.
CREATE INDEX ai_jobs_due ON ai_jobs (lease_until) WHERE status IN ('pending', 'running');
-- GET /ai/jobs, newest first, and its subject filter.
CREATE INDEX ai_jobs_list ON ai_jobs (org_id, client_id, id DESC);
CREATE INDEX ai_jobs_subject ON ai_jobs (org_id, client_id, subject_id, id DESC);

COMMENT ON TABLE ai_jobs IS 'tenant: pre-call briefs and lead enrichments of one client';

ALTER TABLE fuel_ledger DROP CONSTRAINT fuel_ledger_reason,
  ADD CONSTRAINT fuel_ledger_reason
    CHECK (reason IN ('grant', 'adjustment', 'sms', 'gist', 'ai_job', 'refund'));
