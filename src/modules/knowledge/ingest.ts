import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { emit } from '../../platform/events/emit.ts';
import { type Lease, type LeasedWork, leasedLoop } from '../../platform/jobs/leased.ts';
import type { Loop } from '../../platform/jobs/runner.ts';
import {
  DocumentFetchError,
  type DocumentFetchOptions,
  fetchDocument,
} from '../../platform/outbound/document-fetch.ts';
import { StorageObjectError, StoragePathError, type StorageProvider } from '../../providers/storage/index.ts';
import { chunkText } from './chunk.ts';
import { ExtractionError, extractText } from './extract.ts';
import { toDocument } from './service.ts';
import {
  claimDeletedDocuments,
  type DocumentRow,
  insertChunks,
  markFailed,
  markPending,
  markReady,
  purgeDocuments,
} from './store.ts';
import { normalizeText } from './text.ts';

/**
 * Ingestion, as leased work (platform/jobs/leased.ts): a worker claims due documents under a lease,
 * reads each source outside any transaction (the text, a URL through the SSRF guard, an uploaded
 * object), extracts and chunks the text, and stores the chunks, the `ready` status and
 * `ai.kb_ingest.completed` in one transaction, only while its lease holds the document. A worker killed
 * mid-way leaves the document `processing` under a lease; once the lease is over another worker claims
 * it again, so no document stays `processing`. A passing failure (a network error, a 5xx) is retried on
 * `KB_INGEST_RETRY_SCHEDULE`; a lasting one (a 404, a blocked address, an unreadable file) or the last
 * retry fails the document with its error and `ai.job.failed`.
 */

export const JOB_TYPE = 'kb_ingest';
const BATCH = 4;
const CLEANUP_BATCH = 200;

export interface IngestContext {
  db: Db;
  storage: StorageProvider;
  fetch: DocumentFetchOptions;
  leaseMs: number;
  pollMs: number;
  retrySchedule: number[];
  log: Logger;
}

/** A failure that retrying cannot fix: the document fails with the message. */
class LastingFailure extends Error {}

export function documentIngestion(context: IngestContext): LeasedWork<DocumentRow> {
  const max = context.retrySchedule.length + 1;
  return {
    name: 'kb_ingestion',
    intervalMs: context.pollMs,
    table: 'kb_documents',
    due: sql`t.status IN ('pending', 'processing') AND t.deleted_at IS NULL`,
    onClaim: sql`status = 'processing', updated_at = now()`,
    leaseMs: context.leaseMs,
    batch: BATCH,
    attempts: { max, backoffMs: (attempt) => context.retrySchedule[attempt - 1] },
    work: (lease) => ingestDocument(context, lease),
    onRetry: (trx, lease, error) => markPending(trx, lease.row, passingMessage(error)),
    exhausted: (lease, error) =>
      fail(
        lease,
        // Claimed again after its last attempt's lease ran out: that worker died every time.
        lease.attempt > max ? `Ingestion did not finish in ${max} attempts.` : passingMessage(error),
      ),
  };
}

/** The ingestion loop (a test runs one round with `.run()`). */
export function ingestionLoop(context: IngestContext): Loop {
  return leasedLoop(context.db, documentIngestion(context), context.log);
}

export async function ingestDocument(context: IngestContext, lease: Lease<DocumentRow>): Promise<void> {
  let text: string;
  try {
    text = await readText(context, lease.row);
  } catch (error) {
    if (error instanceof LastingFailure) {
      await fail(lease, error.message);
      return;
    }
    throw error;
  }
  const chunks = chunkText(text);
  await lease.inTransaction(async (trx, held) => {
    if (!isProcessing(held)) return;
    await insertChunks(trx, held, chunks);
    const ready = await markReady(trx, held, { chunkCount: chunks.length, characterCount: text.length });
    await emit(
      trx,
      tenantOf(ready),
      'ai.kb_ingest.completed',
      {
        document_id: ready.id,
        kb_id: ready.kb_id,
        chunk_count: ready.chunk_count,
        character_count: ready.character_count,
        document: toDocument(ready),
      },
      ready.metadata,
    );
  });
}

/** The document's text, normalised; a `LastingFailure` when it has none or cannot be read. */
async function readText(context: IngestContext, document: DocumentRow): Promise<string> {
  try {
    if (document.source_type === 'manual') {
      const text = normalizeText(document.content ?? '');
      if (!text) throw new LastingFailure('The document has no text.');
      return text;
    }
    if (document.source_type === 'url') {
      const fetched = await fetchDocument(document.source_url as string, context.fetch);
      return await extractText(fetched.body, fetched.contentType);
    }
    const key = context.storage.keyFromStoragePath(document.storage_path, tenantOf(document));
    const body = await context.storage.read(key, { maxBytes: context.fetch.maxBytes });
    return await extractText(body, document.mime_type);
  } catch (error) {
    if (isLasting(error)) throw new LastingFailure((error as Error).message);
    throw error;
  }
}

function isLasting(error: unknown): boolean {
  if (
    error instanceof ExtractionError ||
    error instanceof StorageObjectError ||
    error instanceof StoragePathError
  )
    return true;
  if (!(error instanceof DocumentFetchError)) return false;
  if (error.reason === 'timeout' || error.reason === 'network_error') return false;
  // 408, 425, 429 and 5xx may answer differently later; any other status will not.
  if (error.reason === 'http_status' && error.status !== null)
    return !(error.status >= 500 || error.status === 408 || error.status === 425 || error.status === 429);
  return true;
}

function passingMessage(error: unknown): string {
  if (error instanceof DocumentFetchError) return error.message;
  return 'The source could not be read for now.';
}

async function fail(lease: Lease<DocumentRow>, error: string): Promise<void> {
  await lease.inTransaction(async (trx, held) => {
    if (!isProcessing(held)) return;
    const failed = await markFailed(trx, held, error);
    await emit(
      trx,
      tenantOf(failed),
      'ai.job.failed',
      {
        job_type: JOB_TYPE,
        document_id: failed.id,
        kb_id: failed.kb_id,
        error,
        attempts: failed.attempts,
        document: toDocument(failed),
      },
      failed.metadata,
    );
  });
}

/** `kb_cleanup`: removes the chunks (and uploaded objects) of deleted documents, a batch per transaction. */
export async function purgeDeletedDocuments(db: Db, storage: StorageProvider, log: Logger): Promise<number> {
  let purged = 0;
  for (;;) {
    const count = await inTransaction(db, async (trx) => {
      const documents = await claimDeletedDocuments(trx, CLEANUP_BATCH);
      for (const document of documents) {
        if (document.source_type !== 'upload' || !document.storage_path) continue;
        try {
          await storage.delete(storage.keyFromStoragePath(document.storage_path, tenantOf(document)));
        } catch (error) {
          // The chunks still go; an object left behind costs storage, not correctness.
          log.warn({ err: error, documentId: document.id }, 'deleting an uploaded object failed');
        }
      }
      await purgeDocuments(
        trx,
        documents.map((document) => document.id),
      );
      return documents.length;
    });
    purged += count;
    if (count < CLEANUP_BATCH) return purged;
  }
}

/** Still being ingested: not deleted meanwhile. */
function isProcessing(document: DocumentRow): boolean {
  return document.status === 'processing' && document.deleted_at === null;
}

function tenantOf(row: { org_id: string; client_id: string }) {
  return { orgId: row.org_id, clientId: row.client_id };
}
