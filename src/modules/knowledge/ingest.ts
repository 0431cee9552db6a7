import type { Logger } from 'pino';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { emit } from '../../platform/events/emit.ts';
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
  claimDueDocuments,
  type DocumentRow,
  insertChunks,
  lockAttempt,
  markFailed,
  markReady,
  purgeDocuments,
  scheduleRetry,
} from './store.ts';
import { normalizeText } from './text.ts';

/**
 * Ingestion: a worker loop claims due documents with a lease (one committed statement), reads each
 * source outside any transaction (the text, a URL through the SSRF guard, an uploaded object), extracts
 * and chunks the text, and stores the chunks, the `ready` status and `ai.kb_ingest.completed` in one
 * transaction, only if its attempt still holds the document. A worker killed mid-way leaves the document
 * `processing` under a lease; once the lease is over another worker claims it again, so no document stays
 * `processing`. A passing failure (a network error, a 5xx) is retried on `KB_INGEST_RETRY_SCHEDULE`; a
 * lasting one (a 404, a blocked address, an unreadable file) or the last retry fails the document with
 * its error and `ai.job.failed`.
 */

export const JOB_TYPE = 'kb_ingest';
const BATCH = 4;
const CLEANUP_BATCH = 200;

export interface IngestContext {
  db: Db;
  storage: StorageProvider;
  fetch: DocumentFetchOptions;
  leaseMs: number;
  retrySchedule: number[];
  log: Logger;
}

/** A failure that retrying cannot fix: the document fails with the message. */
class LastingFailure extends Error {}

/** One round of the ingestion loop; true when there may be more due right away. */
export async function ingestDueDocuments(context: IngestContext): Promise<boolean> {
  const documents = await claimDueDocuments(context.db, context.leaseMs, BATCH);
  await Promise.all(documents.map((document) => ingestDocument(context, document)));
  return documents.length === BATCH;
}

export async function ingestDocument(context: IngestContext, document: DocumentRow): Promise<void> {
  const { db, log } = context;
  const maxAttempts = context.retrySchedule.length + 1;
  if (document.attempts > maxAttempts) {
    // Claimed again after its last attempt's lease ran out: that worker died every time.
    await fail(db, document, `Ingestion did not finish in ${maxAttempts} attempts.`);
    return;
  }
  let text: string;
  try {
    text = await readText(context, document);
  } catch (error) {
    const lasting = error instanceof LastingFailure;
    if (!lasting)
      log.warn({ err: error, documentId: document.id, attempt: document.attempts }, 'ingestion failed');
    const message = lasting ? error.message : passingMessage(error);
    if (lasting || document.attempts >= maxAttempts) await fail(db, document, message);
    else await retry(db, document, message, context.retrySchedule[document.attempts - 1]);
    return;
  }
  const chunks = chunkText(text);
  await inTransaction(db, async (trx) => {
    const held = await lockAttempt(trx, document.id, document.attempts);
    if (!held) return;
    await insertChunks(trx, held, chunks);
    const ready = await markReady(trx, held.id, { chunkCount: chunks.length, characterCount: text.length });
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

async function retry(db: Db, document: DocumentRow, error: string, delayMs: number): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (await lockAttempt(trx, document.id, document.attempts))
      await scheduleRetry(trx, document.id, error, delayMs);
  });
}

async function fail(db: Db, document: DocumentRow, error: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const held = await lockAttempt(trx, document.id, document.attempts);
    if (!held) return;
    const failed = await markFailed(trx, held.id, error);
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

function tenantOf(row: { org_id: string; client_id: string }) {
  return { orgId: row.org_id, clientId: row.client_id };
}
