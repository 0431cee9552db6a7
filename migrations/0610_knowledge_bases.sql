-- Knowledge bases, their documents and the documents' chunks with a full-text vector. A document is
-- ingested by a worker loop that claims it with a lease: `due_at` is when it may be claimed (now for a
-- new one, the retry time after a transient failure, the lease's end while processing), so a document
-- whose worker died is claimed again once its lease is over.

CREATE TABLE knowledge_bases (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  FOREIGN KEY (org_id, client_id) REFERENCES clients (org_id, id),
  UNIQUE (org_id, client_id, id)
);
CREATE INDEX knowledge_bases_tenant ON knowledge_bases (org_id, client_id, id DESC) WHERE deleted_at IS NULL;

CREATE TABLE kb_documents (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  kb_id uuid NOT NULL,
  title text NOT NULL,
  source_type text NOT NULL CHECK (source_type IN ('manual', 'url', 'upload')),
  content text,
  source_url text,
  storage_path text,
  mime_type text,
  byte_size bigint,
  status text NOT NULL CHECK (status IN ('pending', 'processing', 'ready', 'failed')),
  error text,
  chunk_count integer NOT NULL DEFAULT 0,
  character_count integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  due_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ingested_at timestamptz,
  deleted_at timestamptz,
  -- Set by the clean-up job once a deleted document's chunks (and uploaded object) are gone.
  purged_at timestamptz,
  FOREIGN KEY (org_id, client_id, kb_id) REFERENCES knowledge_bases (org_id, client_id, id),
  UNIQUE (org_id, client_id, id),
  CHECK ((status IN ('pending', 'processing')) = (due_at IS NOT NULL))
);
CREATE INDEX kb_documents_list ON kb_documents (org_id, client_id, kb_id, id DESC) WHERE deleted_at IS NULL;
-- What the ingestion loop claims.
CREATE INDEX kb_documents_due ON kb_documents (due_at) WHERE status IN ('pending', 'processing') AND deleted_at IS NULL;
-- What the clean-up job purges.
CREATE INDEX kb_documents_deleted ON kb_documents (deleted_at) WHERE deleted_at IS NOT NULL AND purged_at IS NULL;

CREATE TABLE kb_chunks (
  document_id uuid NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
  chunk_index integer NOT NULL,
  org_id uuid NOT NULL,
  client_id uuid NOT NULL,
  kb_id uuid NOT NULL,
  content text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  PRIMARY KEY (document_id, chunk_index)
);
-- Search is always within one knowledge base of one tenant.
CREATE INDEX kb_chunks_search ON kb_chunks USING gin (tsv);
CREATE INDEX kb_chunks_kb ON kb_chunks (org_id, client_id, kb_id);
