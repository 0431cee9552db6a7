-- Issue 27: every tenant table distributable by org_id (Citus: the distribution column in every primary key,
-- unique constraint and foreign key between distributed tables), and every table of schema public says what it
-- is: `tenant:` (distributed by org_id, co-located), `reference:` (small, replicated to every node) or `local:`
-- (the coordinator's alone). test/foundation/distributable.test.ts reads the catalog and keeps it so.
-- The plan for Citus itself is docs/pages/platform/deployment.md, "Past one PostgreSQL".
-- Ids stay UUIDv7 and globally unique; no column changes, so the API does not either.

-- 1. Foreign keys that name a key about to change, or that reference a tenant table without org_id.

-- These 21 rest on clients_org_id_id_key, which the new primary key (org_id, id) replaces.
ALTER TABLE activities DROP CONSTRAINT activities_org_id_client_id_fkey;
ALTER TABLE agents DROP CONSTRAINT agents_org_id_client_id_fkey;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_org_id_client_id_fkey;
ALTER TABLE calls DROP CONSTRAINT calls_org_id_client_id_fkey;
ALTER TABLE companies DROP CONSTRAINT companies_org_id_client_id_fkey;
ALTER TABLE contacts DROP CONSTRAINT contacts_org_id_client_id_fkey;
ALTER TABLE crm_lists DROP CONSTRAINT crm_lists_org_id_client_id_fkey;
ALTER TABLE fuel_ledger DROP CONSTRAINT fuel_ledger_client_fk;
ALTER TABLE gists DROP CONSTRAINT gists_org_id_client_id_fkey;
ALTER TABLE knowledge_bases DROP CONSTRAINT knowledge_bases_org_id_client_id_fkey;
ALTER TABLE orgs DROP CONSTRAINT orgs_house_client_fk;
ALTER TABLE phone_numbers DROP CONSTRAINT phone_numbers_org_id_client_id_fkey;
ALTER TABLE pipelines DROP CONSTRAINT pipelines_org_id_client_id_fkey;
ALTER TABLE sdr_campaigns DROP CONSTRAINT sdr_campaigns_org_id_client_id_fkey;
ALTER TABLE sdr_prospects DROP CONSTRAINT sdr_prospects_org_id_contact_client_id_fkey;
ALTER TABLE sequences DROP CONSTRAINT sequences_org_id_client_id_fkey;
ALTER TABLE sms_conversations DROP CONSTRAINT sms_conversations_org_id_client_id_fkey;
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_org_id_client_id_fkey;
ALTER TABLE tasks DROP CONSTRAINT tasks_org_id_client_id_fkey;
ALTER TABLE users DROP CONSTRAINT users_org_id_client_id_fkey;
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_org_id_client_id_fkey;
-- This one rests on sdr_campaigns_org_id_id_key, likewise replaced by the primary key.
ALTER TABLE sdr_prospects DROP CONSTRAINT sdr_prospects_org_id_campaign_id_fkey;
-- These reference a parent by id alone; they come back below as (org_id, x) references.
ALTER TABLE crm_list_members DROP CONSTRAINT crm_list_members_list_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_subscription_id_fkey;
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_delivery_id_fkey;
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_conversation_id_fkey;
ALTER TABLE agent_slugs DROP CONSTRAINT agent_slugs_agent_id_fkey;
ALTER TABLE call_transcript_turns DROP CONSTRAINT call_transcript_turns_call_id_fkey;
ALTER TABLE kb_chunks DROP CONSTRAINT kb_chunks_document_id_fkey;
ALTER TABLE sequence_step_sends DROP CONSTRAINT sequence_step_sends_enrollment_id_fkey;
ALTER TABLE deals DROP CONSTRAINT deals_pipeline_id_stage_id_fkey;

-- 2. Primary keys: (org_id, id), or org_id ahead of a child's natural key. Parents first.

ALTER TABLE clients DROP CONSTRAINT clients_pkey, ADD CONSTRAINT clients_pkey PRIMARY KEY (org_id, id);
ALTER TABLE clients DROP CONSTRAINT clients_org_id_id_key;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_pkey, ADD CONSTRAINT api_keys_pkey PRIMARY KEY (org_id, id);
ALTER TABLE fuel_ledger DROP CONSTRAINT fuel_ledger_pkey, ADD CONSTRAINT fuel_ledger_pkey PRIMARY KEY (org_id, id);
ALTER TABLE events DROP CONSTRAINT events_pkey, ADD CONSTRAINT events_pkey PRIMARY KEY (org_id, id);
ALTER TABLE companies DROP CONSTRAINT companies_pkey, ADD CONSTRAINT companies_pkey PRIMARY KEY (org_id, id);
ALTER TABLE contacts DROP CONSTRAINT contacts_pkey, ADD CONSTRAINT contacts_pkey PRIMARY KEY (org_id, id);
ALTER TABLE contact_phones DROP CONSTRAINT contact_phones_pkey,
  ADD CONSTRAINT contact_phones_pkey PRIMARY KEY (org_id, id);
ALTER TABLE contact_emails DROP CONSTRAINT contact_emails_pkey,
  ADD CONSTRAINT contact_emails_pkey PRIMARY KEY (org_id, id);
ALTER TABLE pipelines DROP CONSTRAINT pipelines_pkey, ADD CONSTRAINT pipelines_pkey PRIMARY KEY (org_id, id);
ALTER TABLE pipeline_stages DROP CONSTRAINT pipeline_stages_pkey,
  ADD CONSTRAINT pipeline_stages_pkey PRIMARY KEY (org_id, id);
ALTER TABLE deals DROP CONSTRAINT deals_pkey, ADD CONSTRAINT deals_pkey PRIMARY KEY (org_id, id);
ALTER TABLE activities DROP CONSTRAINT activities_pkey, ADD CONSTRAINT activities_pkey PRIMARY KEY (org_id, id);
ALTER TABLE tasks DROP CONSTRAINT tasks_pkey, ADD CONSTRAINT tasks_pkey PRIMARY KEY (org_id, id);
ALTER TABLE crm_lists DROP CONSTRAINT crm_lists_pkey, ADD CONSTRAINT crm_lists_pkey PRIMARY KEY (org_id, id);
ALTER TABLE crm_list_members DROP CONSTRAINT crm_list_members_pkey,
  ADD CONSTRAINT crm_list_members_pkey PRIMARY KEY (org_id, list_id, entity_id);
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_pkey,
  ADD CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (org_id, id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
  ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (org_id, id);
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_pkey,
  ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (org_id, id);
ALTER TABLE phone_numbers DROP CONSTRAINT phone_numbers_pkey,
  ADD CONSTRAINT phone_numbers_pkey PRIMARY KEY (org_id, id);
ALTER TABLE sms_conversations DROP CONSTRAINT sms_conversations_pkey,
  ADD CONSTRAINT sms_conversations_pkey PRIMARY KEY (org_id, id);
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_pkey, ADD CONSTRAINT sms_messages_pkey PRIMARY KEY (org_id, id);
ALTER TABLE agents DROP CONSTRAINT agents_pkey, ADD CONSTRAINT agents_pkey PRIMARY KEY (org_id, id);
ALTER TABLE calls DROP CONSTRAINT calls_pkey, ADD CONSTRAINT calls_pkey PRIMARY KEY (org_id, id);
ALTER TABLE call_transcript_turns DROP CONSTRAINT call_transcript_turns_pkey,
  ADD CONSTRAINT call_transcript_turns_pkey PRIMARY KEY (org_id, call_id, position);
ALTER TABLE gists DROP CONSTRAINT gists_pkey, ADD CONSTRAINT gists_pkey PRIMARY KEY (org_id, id);
ALTER TABLE knowledge_bases DROP CONSTRAINT knowledge_bases_pkey,
  ADD CONSTRAINT knowledge_bases_pkey PRIMARY KEY (org_id, id);
ALTER TABLE kb_documents DROP CONSTRAINT kb_documents_pkey, ADD CONSTRAINT kb_documents_pkey PRIMARY KEY (org_id, id);
ALTER TABLE kb_chunks DROP CONSTRAINT kb_chunks_pkey,
  ADD CONSTRAINT kb_chunks_pkey PRIMARY KEY (org_id, document_id, chunk_index);
ALTER TABLE sequences DROP CONSTRAINT sequences_pkey, ADD CONSTRAINT sequences_pkey PRIMARY KEY (org_id, id);
ALTER TABLE sequence_enrollments DROP CONSTRAINT sequence_enrollments_pkey,
  ADD CONSTRAINT sequence_enrollments_pkey PRIMARY KEY (org_id, id);
ALTER TABLE sequence_step_sends DROP CONSTRAINT sequence_step_sends_pkey,
  ADD CONSTRAINT sequence_step_sends_pkey PRIMARY KEY (org_id, enrollment_id, step_index);
ALTER TABLE sdr_campaigns DROP CONSTRAINT sdr_campaigns_pkey, ADD CONSTRAINT sdr_campaigns_pkey PRIMARY KEY (org_id, id);
ALTER TABLE sdr_campaigns DROP CONSTRAINT sdr_campaigns_org_id_id_key;
ALTER TABLE sdr_prospects DROP CONSTRAINT sdr_prospects_pkey, ADD CONSTRAINT sdr_prospects_pkey PRIMARY KEY (org_id, id);

-- Statements that still find a row by id alone (carrier progress reports, job payloads; listed in the plan)
-- keep the index they use today until each carries its org_id; on Citus they fan out to every shard.
CREATE INDEX sms_messages_id ON sms_messages (id);
CREATE INDEX calls_id ON calls (id);
CREATE INDEX kb_documents_id ON kb_documents (id);
CREATE INDEX sequence_enrollments_id ON sequence_enrollments (id);
CREATE INDEX sdr_campaigns_id ON sdr_campaigns (id);
CREATE INDEX sdr_prospects_id ON sdr_prospects (id);

-- 3. Unique constraints and indexes: org_id in each, or the platform-wide guarantee moves to a local table.

ALTER TABLE pipeline_stages DROP CONSTRAINT pipeline_stages_pipeline_id_id_key,
  ADD CONSTRAINT pipeline_stages_pipeline_id_id_key UNIQUE (org_id, pipeline_id, id);
ALTER TABLE pipeline_stages DROP CONSTRAINT pipeline_stages_pipeline_id_position_key,
  ADD CONSTRAINT pipeline_stages_pipeline_id_position_key UNIQUE (org_id, pipeline_id, position);
DROP INDEX contact_phones_one_primary;
CREATE UNIQUE INDEX contact_phones_one_primary ON contact_phones (org_id, contact_id) WHERE is_primary;
DROP INDEX contact_emails_one_primary;
CREATE UNIQUE INDEX contact_emails_one_primary ON contact_emails (org_id, contact_id) WHERE is_primary;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_subscription_id_event_id_key,
  ADD CONSTRAINT webhook_deliveries_subscription_id_event_id_key UNIQUE (org_id, subscription_id, event_id);
DROP INDEX sequence_enrollments_active_contact;
CREATE UNIQUE INDEX sequence_enrollments_active_contact ON sequence_enrollments (org_id, sequence_id, contact_id)
  WHERE status = 'active';
ALTER TABLE sequence_step_sends DROP CONSTRAINT sequence_step_sends_cause_key_key,
  ADD CONSTRAINT sequence_step_sends_cause_key_key UNIQUE (org_id, cause_key);
ALTER TABLE sdr_prospects DROP CONSTRAINT sdr_prospects_campaign_id_contact_id_key,
  ADD CONSTRAINT sdr_prospects_campaign_id_contact_id_key UNIQUE (org_id, campaign_id, contact_id);

-- A key is found by the digest of its secret (32 random bytes), which arrives without a tenant: two keys cannot
-- share a digest, so uniqueness goes and a plain index serves the lookup (cached per process, see keys.ts).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_secret_hash_key;
CREATE INDEX api_keys_secret_hash ON api_keys (secret_hash);

-- A carrier's message or call id: a redelivered callback is of the same number, hence the same org, so the
-- once-per-carrier-id guarantee holds within the org; the plain index serves callbacks, which name no tenant.
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_provider_provider_message_id_key,
  ADD CONSTRAINT sms_messages_provider_provider_message_id_key UNIQUE (org_id, provider, provider_message_id);
CREATE INDEX sms_messages_provider_message ON sms_messages (provider, provider_message_id);
ALTER TABLE calls DROP CONSTRAINT calls_provider_provider_call_id_key,
  ADD CONSTRAINT calls_provider_provider_call_id_key UNIQUE (org_id, provider, provider_call_id);
CREATE INDEX calls_provider_call ON calls (provider, provider_call_id);

-- A number belongs to one org platform-wide, and inbound traffic is routed by the number alone: that guarantee
-- and that lookup live in a local table the numbers store writes in the same transaction.
CREATE TABLE phone_number_holders (
  number text PRIMARY KEY,
  org_id uuid NOT NULL,
  phone_number_id uuid NOT NULL
);
INSERT INTO phone_number_holders (number, org_id, phone_number_id) SELECT number, org_id, id FROM phone_numbers;
ALTER TABLE phone_numbers DROP CONSTRAINT phone_numbers_number_key,
  ADD CONSTRAINT phone_numbers_number_key UNIQUE (org_id, number);

-- 4. Foreign keys back, each carrying org_id on both sides.

ALTER TABLE orgs ADD CONSTRAINT orgs_house_client_fk FOREIGN KEY (id, house_client_id) REFERENCES clients (org_id, id)
  DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE activities ADD CONSTRAINT activities_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE agents ADD CONSTRAINT agents_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE calls ADD CONSTRAINT calls_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE companies ADD CONSTRAINT companies_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE contacts ADD CONSTRAINT contacts_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE crm_lists ADD CONSTRAINT crm_lists_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE fuel_ledger ADD CONSTRAINT fuel_ledger_client_fk
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE gists ADD CONSTRAINT gists_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE knowledge_bases ADD CONSTRAINT knowledge_bases_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE phone_numbers ADD CONSTRAINT phone_numbers_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE pipelines ADD CONSTRAINT pipelines_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE sdr_campaigns ADD CONSTRAINT sdr_campaigns_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE sdr_prospects ADD CONSTRAINT sdr_prospects_org_id_contact_client_id_fkey
  FOREIGN KEY (org_id, contact_client_id) REFERENCES clients (org_id, id);
ALTER TABLE sequences ADD CONSTRAINT sequences_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE sms_conversations ADD CONSTRAINT sms_conversations_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE sms_messages ADD CONSTRAINT sms_messages_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE tasks ADD CONSTRAINT tasks_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE users ADD CONSTRAINT users_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_org_id_client_id_fkey
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id);
ALTER TABLE deals ADD CONSTRAINT deals_pipeline_id_stage_id_fkey
  FOREIGN KEY (org_id, pipeline_id, stage_id) REFERENCES pipeline_stages (org_id, pipeline_id, id);
ALTER TABLE crm_list_members ADD CONSTRAINT crm_list_members_list_id_fkey
  FOREIGN KEY (org_id, list_id) REFERENCES crm_lists (org_id, id) ON DELETE CASCADE;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_subscription_id_fkey
  FOREIGN KEY (org_id, subscription_id) REFERENCES webhook_subscriptions (org_id, id) ON DELETE CASCADE;
ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey
  FOREIGN KEY (org_id, delivery_id) REFERENCES webhook_deliveries (org_id, id) ON DELETE CASCADE;
ALTER TABLE sms_messages ADD CONSTRAINT sms_messages_conversation_id_fkey
  FOREIGN KEY (org_id, conversation_id) REFERENCES sms_conversations (org_id, id);
ALTER TABLE agent_slugs ADD CONSTRAINT agent_slugs_agent_id_fkey
  FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE call_transcript_turns ADD CONSTRAINT call_transcript_turns_call_id_fkey
  FOREIGN KEY (org_id, call_id) REFERENCES calls (org_id, id);
ALTER TABLE kb_chunks ADD CONSTRAINT kb_chunks_document_id_fkey
  FOREIGN KEY (org_id, document_id) REFERENCES kb_documents (org_id, id) ON DELETE CASCADE;
ALTER TABLE sequence_step_sends ADD CONSTRAINT sequence_step_sends_enrollment_id_fkey
  FOREIGN KEY (org_id, enrollment_id) REFERENCES sequence_enrollments (org_id, id);
ALTER TABLE sdr_prospects ADD CONSTRAINT sdr_prospects_org_id_campaign_id_fkey
  FOREIGN KEY (org_id, campaign_id) REFERENCES sdr_campaigns (org_id, id);

-- 5. What each table is. `tenant:` tables are distributed by org_id and co-located with orgs.

COMMENT ON TABLE orgs IS 'tenant: the tenants themselves; distributed by id, co-located with every org_id table';
COMMENT ON TABLE clients IS 'tenant: the clients of one org, its house client among them';
COMMENT ON TABLE api_keys IS 'tenant: the keys of one org; found by digest through a per-process cache';
COMMENT ON TABLE fuel_ledger IS 'tenant: the FUEL credits and debits of one org';
COMMENT ON TABLE events IS 'tenant: the outbox of one org; the relay claims it per shard on Citus';
COMMENT ON TABLE idempotency_keys IS 'tenant: stored responses of creating POSTs, per key owner';
COMMENT ON TABLE companies IS 'tenant: CRM companies of one client';
COMMENT ON TABLE contacts IS 'tenant: CRM contacts of one client';
COMMENT ON TABLE contact_phones IS 'tenant: a contact''s phone numbers, unique within its client';
COMMENT ON TABLE contact_emails IS 'tenant: a contact''s email addresses, unique within its client';
COMMENT ON TABLE pipelines IS 'tenant: deal pipelines of one client';
COMMENT ON TABLE pipeline_stages IS 'tenant: the stages of a pipeline';
COMMENT ON TABLE deals IS 'tenant: CRM deals of one client';
COMMENT ON TABLE activities IS 'tenant: CRM activities of one client';
COMMENT ON TABLE tasks IS 'tenant: CRM tasks of one client';
COMMENT ON TABLE crm_lists IS 'tenant: contact and company lists of one client';
COMMENT ON TABLE crm_list_members IS 'tenant: the members of a list';
COMMENT ON TABLE webhook_subscriptions IS 'tenant: webhook endpoints of one client';
COMMENT ON TABLE webhook_deliveries IS 'tenant: one event to one subscription, with its retry state';
COMMENT ON TABLE webhook_delivery_attempts IS 'tenant: each HTTP attempt of a delivery';
COMMENT ON TABLE phone_numbers IS 'tenant: the numbers of one client; phone_number_holders keeps them unique platform-wide';
COMMENT ON TABLE phone_number_holders IS
  'local: number -> (org_id, phone number id), written with the number; inbound traffic names a number, no tenant';
COMMENT ON TABLE sms_conversations IS 'tenant: SMS threads of one client';
COMMENT ON TABLE sms_messages IS 'tenant: SMS sent and received by one client';
COMMENT ON TABLE agents IS 'tenant: voice agents of one client';
COMMENT ON TABLE agent_slugs IS 'tenant: an agent''s slugs, unique within the org';
COMMENT ON TABLE calls IS 'tenant: calls of one client';
COMMENT ON TABLE call_transcript_turns IS 'tenant: the transcript of a call';
COMMENT ON TABLE call_day_counts IS 'tenant: per-day call counts of one client, for analytics';
COMMENT ON TABLE gists IS 'tenant: AI summaries of one client''s records';
COMMENT ON TABLE knowledge_bases IS 'tenant: knowledge bases of one client';
COMMENT ON TABLE kb_documents IS 'tenant: the documents of a knowledge base';
COMMENT ON TABLE kb_chunks IS 'tenant: the searchable chunks of a document';
COMMENT ON TABLE sequences IS 'tenant: outreach sequences of one client';
COMMENT ON TABLE sequence_enrollments IS 'tenant: a contact enrolled in a sequence';
COMMENT ON TABLE sequence_step_sends IS 'tenant: each step an enrollment has sent';
COMMENT ON TABLE sequence_email_unsubscribes IS 'tenant: addresses that left one client''s sequences';
COMMENT ON TABLE sdr_settings IS 'tenant: the SDR settings of one org';
COMMENT ON TABLE sdr_campaigns IS 'tenant: SDR dialing campaigns of one client';
COMMENT ON TABLE sdr_prospects IS 'tenant: the contacts a campaign dials';
COMMENT ON TABLE email_messages IS
  'local: the email provider''s send-once ledger, keyed by a cause key; the coordinator''s outbound mail';
COMMENT ON TABLE voice_placements IS
  'local: the voice provider''s placed calls by provider call id; progress reports name no tenant';
COMMENT ON TABLE voice_simulator_numbers IS 'local: the voice simulator''s scripts per number; simulator only';
COMMENT ON TABLE worker_heartbeats IS 'local: liveness of worker processes; no tenant';
COMMENT ON TABLE feed_members IS 'reference: the public wallet feed''s members; small, read by every node';
COMMENT ON TABLE feed_addresses IS 'reference: wallet addresses of feed members; small, read by every node';
COMMENT ON TABLE feed_tokens IS 'reference: tokens the wallet feed indexes; small, read by every node';
COMMENT ON TABLE feed_chain_logs IS 'reference: chain logs the wallet feed indexed; platform-wide, no tenant';
COMMENT ON TABLE feed_delegations IS 'reference: delegations the wallet feed indexed; platform-wide, no tenant';
COMMENT ON TABLE feed_index_blocks IS 'reference: block hashes the wallet feed indexed; platform-wide, no tenant';
COMMENT ON TABLE feed_index_state IS 'reference: the wallet feed indexer''s cursor; one row';
COMMENT ON TABLE kysely_migration IS 'local: the migrations applied; the coordinator runs them';
COMMENT ON TABLE kysely_migration_lock IS 'local: the lock that serialises migrations; the coordinator''s';
