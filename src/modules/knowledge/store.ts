import { type Generated, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { MetadataColumn } from '../../platform/db/schema.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    knowledge_bases: KnowledgeBasesTable;
    kb_documents: KbDocumentsTable;
    kb_chunks: KbChunksTable;
  }
}

export interface KnowledgeBasesTable {
  id: string;
  org_id: string;
  client_id: string;
  name: string;
  description: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: Date | null;
}

export type SourceType = 'manual' | 'url' | 'upload';
export type DocumentStatus = 'pending' | 'processing' | 'ready' | 'failed';

export interface KbDocumentsTable {
  id: string;
  org_id: string;
  client_id: string;
  kb_id: string;
  title: string;
  source_type: SourceType;
  content: string | null;
  source_url: string | null;
  storage_path: string | null;
  mime_type: string | null;
  byte_size: number | null;
  metadata: MetadataColumn;
  status: DocumentStatus;
  error: string | null;
  chunk_count: Generated<number>;
  character_count: Generated<number>;
  /** Ingestion is leased work (platform/jobs/leased.ts). */
  attempts: Generated<number>;
  lease_id: string | null;
  lease_until: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  ingested_at: Date | null;
  deleted_at: Date | null;
  purged_at: Date | null;
}

export interface KbChunksTable {
  document_id: string;
  chunk_index: number;
  org_id: string;
  client_id: string;
  kb_id: string;
  content: string;
}

export type KnowledgeBaseRow = Selectable<KnowledgeBasesTable>;
export type DocumentRow = Selectable<KbDocumentsTable>;

// Knowledge bases

export async function insertKnowledgeBase(
  trx: Trx,
  tenant: TenantScope,
  kb: { id: string; name: string; description: string | null },
): Promise<KnowledgeBaseRow> {
  return trx
    .insertInto('knowledge_bases')
    .values({ ...kb, org_id: tenant.orgId, client_id: tenant.clientId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const documentCount = sql<number>`(SELECT count(*)::int FROM kb_documents d
  WHERE d.org_id = kb.org_id AND d.client_id = kb.client_id AND d.kb_id = kb.id AND d.deleted_at IS NULL)`;

export function findKnowledgeBase(db: Executor, tenant: TenantScope, id: string) {
  return db
    .selectFrom('knowledge_bases as kb')
    .selectAll('kb')
    .select(documentCount.as('document_count'))
    .where('kb.org_id', '=', tenant.orgId)
    .where('kb.client_id', '=', tenant.clientId)
    .where('kb.id', '=', id)
    .where('kb.deleted_at', 'is', null)
    .executeTakeFirst();
}

export function listKnowledgeBases(db: Executor, tenant: TenantScope, page: PageRequest<string>) {
  let query = db
    .selectFrom('knowledge_bases as kb')
    .selectAll('kb')
    .select(documentCount.as('document_count'))
    .where('kb.org_id', '=', tenant.orgId)
    .where('kb.client_id', '=', tenant.clientId)
    .where('kb.deleted_at', 'is', null);
  if (page.after !== undefined) query = query.where('kb.id', '<', page.after);
  return query.orderBy('kb.id', 'desc').limit(page.limit).execute();
}

export function lockKnowledgeBase(trx: Trx, tenant: TenantScope, id: string) {
  return trx
    .selectFrom('knowledge_bases')
    .selectAll()
    .$call(whereOwned(tenant, id))
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

export function updateKnowledgeBase(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  changes: { name?: string; description?: string | null },
) {
  return trx
    .updateTable('knowledge_bases')
    .$call(whereTenant(tenant))
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** Soft-deletes the base and its documents; false when it is not the tenant's (or deleted already). */
export async function deleteKnowledgeBase(trx: Trx, tenant: TenantScope, id: string): Promise<boolean> {
  const kb = await trx
    .updateTable('knowledge_bases')
    .$call(whereTenant(tenant))
    .set({ deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!kb) return false;
  await trx
    .updateTable('kb_documents')
    .$call(whereTenant(tenant))
    .set({ deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('kb_id', '=', id)
    .where('deleted_at', 'is', null)
    .execute();
  return true;
}

// Documents

export async function insertDocument(
  trx: Trx,
  tenant: TenantScope,
  document: Pick<
    KbDocumentsTable,
    | 'id'
    | 'kb_id'
    | 'title'
    | 'source_type'
    | 'content'
    | 'source_url'
    | 'storage_path'
    | 'mime_type'
    | 'byte_size'
  > & { metadata?: string },
): Promise<DocumentRow> {
  return trx
    .insertInto('kb_documents')
    .values({
      ...document,
      org_id: tenant.orgId,
      client_id: tenant.clientId,
      status: 'pending',
      lease_until: sql<Date>`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findDocument(db: Executor, tenant: TenantScope, kbId: string, id: string) {
  return db
    .selectFrom('kb_documents')
    .selectAll()
    .$call(whereTenant(tenant))
    .where('kb_id', '=', kbId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function listDocuments(
  db: Executor,
  tenant: TenantScope,
  kbId: string,
  filter: { status?: DocumentStatus },
  page: PageRequest<string>,
) {
  let query = db
    .selectFrom('kb_documents')
    .selectAll()
    .$call(whereTenant(tenant))
    .where('kb_id', '=', kbId)
    .where('deleted_at', 'is', null);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function softDeleteDocument(trx: Trx, tenant: TenantScope, kbId: string, id: string) {
  return trx
    .updateTable('kb_documents')
    .$call(whereTenant(tenant))
    .set({ deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('kb_id', '=', kbId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

// Ingestion

/** Stores the chunks in one statement; their full-text vectors are computed by PostgreSQL. */
export async function insertChunks(
  trx: Trx,
  document: DocumentRow,
  chunks: { chunk_index: number; content: string }[],
): Promise<void> {
  await trx.deleteFrom('kb_chunks').where('document_id', '=', document.id).execute();
  if (chunks.length === 0) return;
  await sql`
    INSERT INTO kb_chunks (document_id, chunk_index, org_id, client_id, kb_id, content)
    SELECT ${document.id}, i, ${document.org_id}, ${document.client_id}, ${document.kb_id}, c
    FROM unnest(${chunks.map((chunk) => chunk.chunk_index)}::int[], ${chunks.map((chunk) => chunk.content)}::text[]) AS t(i, c)`.execute(
    trx,
  );
}

type DocumentKey = Pick<DocumentRow, 'org_id' | 'id'>;

/** Ready, its ingestion's lease ended. */
export function markReady(
  trx: Trx,
  document: DocumentKey,
  counts: { chunkCount: number; characterCount: number },
) {
  return trx
    .updateTable('kb_documents')
    .set({
      status: 'ready',
      error: null,
      lease_id: null,
      lease_until: null,
      chunk_count: counts.chunkCount,
      character_count: counts.characterCount,
      ingested_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('org_id', '=', document.org_id)
    .where('id', '=', document.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Failed, its ingestion's lease ended. */
export function markFailed(trx: Trx, document: DocumentKey, error: string) {
  return trx
    .updateTable('kb_documents')
    .set({ status: 'failed', error, lease_id: null, lease_until: null, updated_at: sql<Date>`now()` })
    .where('org_id', '=', document.org_id)
    .where('id', '=', document.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Back to `pending` (until its back-off ends), with the error that made the attempt fail. */
export async function markPending(trx: Trx, document: DocumentKey, error: string) {
  await trx
    .updateTable('kb_documents')
    .set({ status: 'pending', error, updated_at: sql<Date>`now()` })
    .where('org_id', '=', document.org_id)
    .where('id', '=', document.id)
    .execute();
}

// Clean-up

/** Claims deleted documents whose chunks (and uploaded object) are still there. */
export function claimDeletedDocuments(trx: Trx, batch: number) {
  return trx
    .selectFrom('kb_documents')
    .select(['id', 'org_id', 'client_id', 'source_type', 'storage_path'])
    .where('deleted_at', 'is not', null)
    .where('purged_at', 'is', null)
    .orderBy('deleted_at')
    .limit(batch)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function purgeDocuments(trx: Trx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx.deleteFrom('kb_chunks').where('document_id', 'in', ids).execute();
  await trx
    .updateTable('kb_documents')
    .set({ purged_at: sql<Date>`now()`, content: null })
    .where('id', 'in', ids)
    .execute();
}

// Search

export interface SearchHit {
  document_id: string;
  title: string;
  chunk_index: number;
  snippet: string;
  score: number;
}

/**
 * The best chunks for `q` (web-search syntax: words, "phrases", -exclusions, or) in one knowledge base,
 * over ready, undeleted documents. Ranked by ts_rank_cd; the snippet is made for the returned rows only.
 */
export async function searchChunks(
  db: Executor,
  tenant: TenantScope,
  kbId: string,
  q: string,
  limit: number,
): Promise<SearchHit[]> {
  const { rows } = await sql<SearchHit>`
    WITH query AS (SELECT websearch_to_tsquery('english', ${q}) AS tsq),
    best AS (
      SELECT c.document_id, c.chunk_index, c.content, ts_rank_cd(c.tsv, query.tsq) AS score, query.tsq
      FROM kb_chunks c
      CROSS JOIN query
      JOIN kb_documents d ON d.org_id = c.org_id AND d.id = c.document_id
      WHERE c.org_id = ${tenant.orgId} AND c.client_id = ${tenant.clientId} AND c.kb_id = ${kbId}
        AND c.tsv @@ query.tsq
        AND d.status = 'ready' AND d.deleted_at IS NULL
      ORDER BY score DESC, c.document_id, c.chunk_index
      LIMIT ${limit}
    )
    SELECT best.document_id, d.title, best.chunk_index, best.score::float8 AS score,
           ts_headline('english', best.content, best.tsq,
                       'StartSel="", StopSel="", MaxWords=40, MinWords=15, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "') AS snippet
    FROM best JOIN kb_documents d ON d.org_id = ${tenant.orgId} AND d.id = best.document_id
    ORDER BY best.score DESC, best.document_id, best.chunk_index`.execute(db);
  return rows;
}
