import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { jobRegistry } from '../../src/jobs.ts';
import {
  documentIngestion,
  type IngestContext,
  ingestDocument,
  ingestionLoop,
} from '../../src/modules/knowledge/ingest.ts';
import { LeasedTable } from '../../src/platform/jobs/leased.ts';
import { startWorker, type Worker } from '../../src/platform/jobs/runner.ts';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, sleep, type TestApp } from '../helpers.ts';
import { settled } from './support.ts';

/** Ingestion exactly once: two workers, a run repeated, a worker killed mid-way. */
describe('knowledge-base ingestion under failures', () => {
  let t: TestApp;
  let call: Call;
  let kb: string;
  let context: IngestContext;

  before(async () => {
    t = await buildTestApp({
      KB_INGEST_POLL_MS: '20',
      KB_INGEST_LEASE_MS: '400',
      KB_INGEST_RETRY_SCHEDULE: '100ms',
    });
    const tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    kb = (await call('POST', '/kb', { name: 'Load' })).body.knowledge_base.id;
    const { config, platform } = t;
    context = {
      db: platform.db,
      storage: platform.providers.storage,
      fetch: { maxBytes: config.kbFetchMaxBytes, timeoutMs: config.kbFetchTimeoutMs, allowPrivate: false },
      leaseMs: config.kbIngestLeaseMs,
      pollMs: config.kbIngestPollMs,
      retrySchedule: config.kbIngestRetrySchedule,
      log: platform.log,
    };
  });
  const running: Worker[] = [];
  after(async () => {
    await Promise.all(running.splice(0).map((worker) => worker.stop()));
    await t.close();
  });

  /** A worker process's job runner and loops; stopped by the test or at the end. */
  async function worker(): Promise<Worker> {
    const runner = await startWorker(t.database, jobRegistry(t.platform), t.platform.log, {
      concurrency: 2,
      pollInterval: 200,
    });
    running.push(runner);
    return runner;
  }

  async function stop(runner: Worker): Promise<void> {
    running.splice(running.indexOf(runner), 1);
    await runner.stop();
  }

  async function addDocument(title: string, words = 400): Promise<string> {
    const content = Array.from({ length: words }, (_, i) => `${title.toLowerCase()}word${i % 50}`).join(' ');
    const { status, body } = await call('POST', `/kb/${kb}/documents`, {
      title,
      source_type: 'manual',
      content,
    });
    assert.equal(status, 201);
    return body.document.id;
  }

  async function chunkRows(documentId: string): Promise<number> {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = ${documentId}`.execute(t.platform.db);
    return rows[0].n;
  }

  async function completedEvents(documentId: string) {
    return (await eventsOf(call, 'ai.kb_ingest.completed')).filter(
      (event) => event.data.document_id === documentId,
    );
  }

  test('two workers at once ingest each document once; running again changes nothing', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => addDocument(`Doc${i}`)));
    const workers = await Promise.all([worker(), worker()]);
    for (const id of ids) {
      const document = await settled(call, kb, id);
      assert.equal(document.status, 'ready');
      assert.equal(await chunkRows(id), document.chunk_count);
      assert.equal((await completedEvents(id)).length, 1, `one completion event for ${id}`);
    }
    const { rows } = await sql<{
      attempts: number;
    }>`SELECT attempts FROM kb_documents WHERE id = ANY(${ids})`.execute(t.platform.db);
    assert.ok(
      rows.every((row) => row.attempts === 1),
      'each document was claimed once',
    );
    // Running the ingestion again (a third worker, a repeated round) finds nothing to do.
    assert.equal(await ingestionLoop(context).run(), false);
    for (const id of ids) assert.equal((await completedEvents(id)).length, 1);
    await Promise.all(workers.map(stop));
  });

  test('a worker killed mid-ingestion: its lease runs out, another worker finishes the document', async () => {
    const id = await addDocument('Orphan');
    // What a worker killed after claiming leaves behind: the document processing under its lease.
    const claimed = await claim(id);
    assert.equal(claimed.row.status, 'processing');
    assert.equal(claimed.row.attempts, 1);
    const second = await worker();
    const document = await settled(call, kb, id);
    assert.equal(document.status, 'ready');
    const { rows } = await sql<{
      attempts: number;
    }>`SELECT attempts FROM kb_documents WHERE id = ${id}`.execute(t.platform.db);
    assert.equal(rows[0].attempts, 2);

    // The killed worker comes back to life and finishes its old attempt: nothing is written twice.
    await ingestDocument(context, claimed);
    assert.equal((await completedEvents(id)).length, 1);
    assert.equal(await chunkRows(id), document.chunk_count);
    await stop(second);
  });

  test('a document whose every worker dies ends failed, never stuck in processing', async () => {
    const id = await addDocument('Cursed');
    // Two attempts are allowed (one retry); both claims are abandoned.
    await claim(id);
    await sleep(450);
    await claim(id);
    await worker();
    const document = await settled(call, kb, id);
    assert.equal(document.status, 'failed');
    assert.match(document.error, /did not finish in 2 attempts/);
    const failed = (await eventsOf(call, 'ai.job.failed')).filter((event) => event.data.document_id === id);
    assert.equal(failed.length, 1);
  });

  /** Claims the document as a worker would (no worker runs meanwhile). */
  async function claim(id: string) {
    const leases = await new LeasedTable(documentIngestion(context)).claim(t.platform.db, 100);
    const mine = leases.find((lease) => lease.row.id === id);
    if (!mine) throw new Error('the document was not due');
    return mine;
  }
});
