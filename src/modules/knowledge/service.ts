import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import {
  newObjectKey,
  StoragePathError,
  type StorageProvider,
  type UploadTarget,
} from '../../providers/storage/index.ts';
import { EXTRACTABLE_TYPES } from './extract.ts';
import * as store from './store.ts';

/**
 * Knowledge bases and their documents. A document is created `pending` with its ingestion due at once;
 * the ingestion loop (ingest.ts) takes it from there. Deleting hides a document (or a base and its
 * documents) from reads and search at once; the clean-up job removes its chunks later.
 */

export const MAX_CONTENT_CHARACTERS = 200_000;

export interface KnowledgeBase {
  id: string;
  name: string;
  description: string | null;
  document_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface KnowledgeBaseInput {
  name: string;
  description?: string | null;
}

function toKnowledgeBase(row: store.KnowledgeBaseRow & { document_count: number }): KnowledgeBase {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    document_count: row.document_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function createKnowledgeBase(
  trx: Trx,
  tenant: TenantScope,
  input: KnowledgeBaseInput,
): Promise<KnowledgeBase> {
  const row = await store.insertKnowledgeBase(trx, tenant, {
    id: newId(),
    name: input.name.trim(),
    description: input.description ?? null,
  });
  return toKnowledgeBase({ ...row, document_count: 0 });
}

export async function getKnowledgeBase(
  db: Executor,
  tenant: TenantScope,
  id: string,
): Promise<KnowledgeBase> {
  const row = await store.findKnowledgeBase(db, tenant, id);
  if (!row) throw errors.notFound('Knowledge base', id);
  return toKnowledgeBase(row);
}

export async function listKnowledgeBases(
  db: Executor,
  tenant: TenantScope,
  page: PageRequest<string>,
): Promise<KnowledgeBase[]> {
  return (await store.listKnowledgeBases(db, tenant, page)).map(toKnowledgeBase);
}

export async function updateKnowledgeBase(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  patch: Partial<KnowledgeBaseInput>,
): Promise<KnowledgeBase> {
  const changes = {
    ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
  };
  if (!(await store.updateKnowledgeBase(trx, tenant, id, changes)))
    throw errors.notFound('Knowledge base', id);
  return getKnowledgeBase(trx, tenant, id);
}

export async function deleteKnowledgeBase(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  if (!(await store.deleteKnowledgeBase(trx, tenant, id))) throw errors.notFound('Knowledge base', id);
}

// Documents

export interface KbDocument {
  id: string;
  kb_id: string;
  title: string;
  source_type: store.SourceType;
  source_url: string | null;
  storage_path: string | null;
  mime_type: string | null;
  byte_size: number | null;
  metadata: Record<string, unknown>;
  status: store.DocumentStatus;
  error: string | null;
  chunk_count: number;
  character_count: number;
  created_at: Date;
  updated_at: Date;
  ingested_at: Date | null;
  deleted_at: Date | null;
}

export function toDocument(row: store.DocumentRow): KbDocument {
  return {
    id: row.id,
    kb_id: row.kb_id,
    title: row.title,
    source_type: row.source_type,
    source_url: row.source_url,
    storage_path: row.storage_path,
    mime_type: row.mime_type,
    byte_size: row.byte_size,
    metadata: row.metadata,
    status: row.status,
    error: row.error,
    chunk_count: row.chunk_count,
    character_count: row.character_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ingested_at: row.ingested_at,
    deleted_at: row.deleted_at,
  };
}

export interface DocumentInput {
  title: string;
  source_type: store.SourceType;
  content?: string;
  source_url?: string;
  storage_path?: string;
  mime_type?: string;
  byte_size?: number;
  /** Echoed in the metadata of its ingestion's events (`ai.kb_ingest.completed`, `ai.job.failed`). */
  metadata?: Record<string, unknown>;
}

/**
 * Adds a document, `pending`, its ingestion due at once. The source is checked here as far as it can
 * be without reading it: manual text present, a URL absolute http(s), an upload's storage path under
 * the caller's prefix (nothing is read otherwise) with a type ingestion can read.
 */
export async function createDocument(
  trx: Trx,
  storage: StorageProvider,
  tenant: TenantScope,
  kbId: string,
  input: DocumentInput,
): Promise<KbDocument> {
  const source = checkedSource(storage, tenant, input);
  if (!(await store.lockKnowledgeBase(trx, tenant, kbId))) throw errors.notFound('Knowledge base', kbId);
  const row = await store.insertDocument(trx, tenant, {
    id: newId(),
    kb_id: kbId,
    title: input.title.trim(),
    source_type: input.source_type,
    ...source,
    mime_type: input.mime_type ?? null,
    byte_size: input.byte_size ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
  });
  return toDocument(row);
}

function checkedSource(
  storage: StorageProvider,
  tenant: TenantScope,
  input: DocumentInput,
): { content: string | null; source_url: string | null; storage_path: string | null } {
  const fields: { field: string; message: string }[] = [];
  const given = { content: input.content, source_url: input.source_url, storage_path: input.storage_path };
  const wanted = { manual: 'content', url: 'source_url', upload: 'storage_path' }[input.source_type];
  for (const [field, value] of Object.entries(given))
    if (value !== undefined && field !== wanted)
      fields.push({ field, message: `is not taken with source_type ${input.source_type}` });
  if (given[wanted as keyof typeof given] === undefined)
    fields.push({ field: wanted, message: `is required with source_type ${input.source_type}` });
  if (input.source_type === 'manual' && input.content !== undefined && !input.content.trim())
    fields.push({ field: 'content', message: 'must contain text' });
  if (input.source_type === 'url' && input.source_url !== undefined && !isHttpUrl(input.source_url))
    fields.push({ field: 'source_url', message: 'must be an absolute http or https URL' });
  if (input.source_type === 'upload') {
    if (input.storage_path !== undefined) {
      try {
        storage.keyFromStoragePath(input.storage_path, tenant);
      } catch (error) {
        if (!(error instanceof StoragePathError)) throw error;
        fields.push({ field: 'storage_path', message: error.message });
      }
    }
    if (input.mime_type === undefined)
      fields.push({ field: 'mime_type', message: 'is required with source_type upload' });
  }
  if (input.mime_type !== undefined && !isReadableType(input.mime_type))
    fields.push({ field: 'mime_type', message: `must be one of ${EXTRACTABLE_TYPES.join(', ')}` });
  if (fields.length) throw errors.validation(fields);
  return {
    content: input.source_type === 'manual' ? (input.content as string) : null,
    source_url: input.source_type === 'url' ? new URL(input.source_url as string).href : null,
    storage_path: input.source_type === 'upload' ? (input.storage_path as string) : null,
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function isReadableType(mimeType: string): boolean {
  const mediaType = mimeType.split(';')[0].trim().toLowerCase();
  return (EXTRACTABLE_TYPES as readonly string[]).includes(mediaType);
}

export async function getDocument(
  db: Executor,
  tenant: TenantScope,
  kbId: string,
  id: string,
): Promise<KbDocument> {
  const row = await store.findDocument(db, tenant, kbId, id);
  if (!row) throw errors.notFound('Document', id);
  return toDocument(row);
}

export async function listDocuments(
  db: Executor,
  tenant: TenantScope,
  kbId: string,
  filter: { status?: store.DocumentStatus },
  page: PageRequest<string>,
): Promise<KbDocument[]> {
  // A base of another tenant, or a deleted one, is a 404 rather than an empty list.
  if (page.after === undefined) await getKnowledgeBase(db, tenant, kbId);
  return (await store.listDocuments(db, tenant, kbId, filter, page)).map(toDocument);
}

/** Soft-deletes the document: gone from reads and search at once; its chunks go with the clean-up job. */
export async function deleteDocument(
  trx: Trx,
  tenant: TenantScope,
  kbId: string,
  id: string,
): Promise<KbDocument> {
  const row = await store.softDeleteDocument(trx, tenant, kbId, id);
  if (!row) throw errors.notFound('Document', id);
  return toDocument(row);
}

// Uploads

export interface UploadInput {
  filename: string;
  mime_type: string;
  byte_size: number;
}

export interface Upload extends UploadTarget {
  storage_path: string;
}

/** Where to PUT a file before creating its document: a signed URL for a fresh key under the caller's prefix. */
export async function createUpload(
  db: Executor,
  storage: StorageProvider,
  tenant: TenantScope,
  kbId: string,
  input: UploadInput,
  maxBytes: number,
): Promise<Upload> {
  const fields: { field: string; message: string }[] = [];
  if (!isReadableType(input.mime_type))
    fields.push({ field: 'mime_type', message: `must be one of ${EXTRACTABLE_TYPES.join(', ')}` });
  if (input.byte_size > maxBytes)
    fields.push({ field: 'byte_size', message: `must be at most ${maxBytes} (KB_FETCH_MAX_BYTES)` });
  if (fields.length) throw errors.validation(fields);
  await getKnowledgeBase(db, tenant, kbId);
  const key = newObjectKey(tenant, `kb/${kbId}`, input.filename);
  const target = await storage.createUpload(key, { byteSize: input.byte_size, mimeType: input.mime_type });
  return { ...target, storage_path: storage.storagePath(key) };
}

// Search

export async function searchKnowledgeBase(
  db: Executor,
  tenant: TenantScope,
  kbId: string,
  q: string,
  limit: number,
): Promise<store.SearchHit[]> {
  await getKnowledgeBase(db, tenant, kbId);
  return store.searchChunks(db, tenant, kbId, q, limit);
}

/** A base with typed-in documents, queued for ingestion (the demo agency's). */
export async function createKnowledgeBaseWithText(
  trx: Trx,
  tenant: TenantScope,
  input: KnowledgeBaseInput & { documents: { title: string; content: string }[] },
): Promise<KnowledgeBase> {
  const kb = await createKnowledgeBase(trx, tenant, input);
  for (const document of input.documents)
    await store.insertDocument(trx, tenant, {
      id: newId(),
      kb_id: kb.id,
      title: document.title,
      source_type: 'manual',
      content: document.content,
      source_url: null,
      storage_path: null,
      mime_type: null,
      byte_size: null,
    });
  return { ...kb, document_count: input.documents.length };
}
