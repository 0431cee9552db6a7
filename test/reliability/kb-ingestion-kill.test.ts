import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, testEnv } from '../helpers.ts';
import { type Fleet, killMidWork, startWorkers } from './takeover.ts';

/** Twice the documents a worker claims at once (`BATCH` in ingest.ts): both workers are mid-fetch. */
const DOCUMENTS = 8;
const ENV = {
  KB_INGEST_POLL_MS: '50',
  KB_INGEST_LEASE_MS: '3000',
  KB_FETCH_TIMEOUT_MS: '60000',
  OUTBOUND_ALLOW_PRIVATE: 'true',
};

/**
 * A site whose pages hang until `release()`: the workers fetching them are mid-ingestion. It counts
 * the fetches of each page and notes which were cut off (the fetching process died).
 */
async function startSlowSite() {
  const hits: Record<string, number> = {};
  const cut = new Set<string>();
  let held: { path: string; res: http.ServerResponse }[] = [];
  let holding = true;
  const page = (path: string) =>
    `<html><body>${Array.from({ length: 40 }, (_, p) => `<p>${path} paragraph ${p}: ${'words about the product '.repeat(20)}</p>`).join('')}</body></html>`;
  const answer = (path: string, res: http.ServerResponse) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(path));
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    if (!holding) return answer(path, res);
    held.push({ path, res });
    res.on('close', () => {
      if (!res.writableEnded) cut.add(path);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    cut,
    held: () => held.length,
    /** Answers every page from now on, the held ones first. */
    release() {
      holding = false;
      for (const { path, res } of held) if (!res.destroyed) answer(path, res);
      held = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Two worker processes each fetch a batch of URL documents from a site that holds every request
 * open; one is killed with SIGKILL. Its documents stay `processing` under their lease; once it ends
 * the survivor claims them again and ingests them. Every document ends `ready`, with its chunks and
 * its `ai.kb_ingest.completed` once; none stays `processing`.
 */
describe('kill -9 of a worker in the middle of a KB ingestion', () => {
  let t: TestApp;
  let site: Awaited<ReturnType<typeof startSlowSite>>;
  let fleet: Fleet | null = null;

  before(async () => {
    t = await buildTestApp(ENV);
    site = await startSlowSite();
  });
  after(async () => {
    await fleet?.stop();
    await site?.close();
    await t.close();
  });

  test('the survivor ingests the dead worker’s documents after their lease, each once', {
    timeout: 180_000,
  }, async () => {
    const tenant = await createTenant(t.app);
    const call = caller(t, tenant.client);
    const kb = (await call('POST', '/kb', { name: 'Kill' })).body.knowledge_base.id as string;
    const ids = new Map<string, string>();
    for (let i = 0; i < DOCUMENTS; i++) {
      const path = `/page/${i}`;
      const created = await call('POST', `/kb/${kb}/documents`, {
        title: `Page ${i}`,
        source_type: 'url',
        source_url: `${site.url}${path}`,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.set(created.body.document.id, path);
    }
    const pool = t.database.pool;

    fleet = await startWorkers(2, testEnv(t.database.url, ENV));
    // A worker claims at most half the documents at once, so with all of them held, each worker is
    // mid-fetch on its half.
    await killMidWork(fleet, async () => site.held() === DOCUMENTS);
    const { rows: stranded } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM kb_documents WHERE kb_id = $1 AND status = 'processing'`,
      [kb],
    );
    assert.equal(stranded[0].n, DOCUMENTS, 'every document was processing at the kill');
    const tookMs = await fleet.tookOver(async () => site.cut.size === DOCUMENTS / 2, 10_000);
    site.release();

    await fleet.tookOver(async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM kb_documents WHERE kb_id = $1 AND status = 'ready'`,
        [kb],
      );
      return rows[0].n === DOCUMENTS;
    }, 60_000);

    const { rows: documents } = await pool.query<{
      id: string;
      attempts: number;
      chunk_count: number;
      chunks: number;
      indexes: number;
      completions: number;
    }>(
      `SELECT d.id, d.attempts, d.chunk_count,
         (SELECT count(*)::int FROM kb_chunks c WHERE c.document_id = d.id) AS chunks,
         (SELECT count(DISTINCT chunk_index)::int FROM kb_chunks c WHERE c.document_id = d.id) AS indexes,
         (SELECT count(*)::int FROM events e
          WHERE e.type = 'ai.kb_ingest.completed' AND e.data->>'document_id' = d.id::text) AS completions
       FROM kb_documents d WHERE d.kb_id = $1`,
      [kb],
    );
    assert.equal(documents.length, DOCUMENTS);
    for (const document of documents) {
      const path = ids.get(document.id) as string;
      const killed = site.cut.has(path);
      assert.ok(document.chunk_count > 1, 'the page made several chunks');
      assert.deepEqual(
        {
          attempts: document.attempts,
          fetches: site.hits[path],
          chunks: document.chunks,
          indexes: document.indexes,
          completions: document.completions,
        },
        {
          attempts: killed ? 2 : 1,
          fetches: killed ? 2 : 1,
          chunks: document.chunk_count,
          indexes: document.chunk_count,
          completions: 1,
        },
        `${path} (${killed ? "the dead worker's" : "the survivor's"})`,
      );
    }
    console.log(`# KB takeover: the dead worker's fetches were cut ${tookMs} ms after the kill`);
  });
});
