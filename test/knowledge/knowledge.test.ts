import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { purgeDeletedDocuments } from '../../src/modules/knowledge/ingest.ts';
import { normalizeText } from '../../src/modules/knowledge/text.ts';
import { newId } from '../../src/platform/db/ids.ts';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type PageServer, settled, startPageServer, upload } from './support.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');

describe('knowledge bases', () => {
  let t: TestApp;
  let pages: PageServer;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    pages = await startPageServer();
    t = await buildTestApp({
      OUTBOUND_ALLOW_PRIVATE: 'true',
      KB_INGEST_POLL_MS: '50',
      KB_INGEST_RETRY_SCHEDULE: '100ms,100ms',
      KB_FETCH_TIMEOUT_MS: '3000',
    });
    await t.startWorker();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
  });
  after(async () => {
    await t.close();
    await pages.close();
  });

  async function newBase(name = 'Help center'): Promise<string> {
    const { status, body } = await call('POST', '/kb', { name, description: 'What support knows' });
    assert.equal(status, 201);
    return body.knowledge_base.id;
  }

  test('bases: create, list with document_count, read, rename, delete', async () => {
    const id = await newBase('Policies');
    const got = await call('GET', `/kb/${id}`);
    assert.equal(got.body.knowledge_base.name, 'Policies');
    assert.equal(got.body.knowledge_base.document_count, 0);
    await call('POST', `/kb/${id}/documents`, {
      title: 'One',
      source_type: 'manual',
      content: 'First text.',
    });
    const listed = await call('GET', '/kb?limit=200');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.find((kb: any) => kb.id === id).document_count, 1);
    const renamed = await call('PATCH', `/kb/${id}`, { name: 'Company policies', description: null });
    assert.equal(renamed.body.knowledge_base.name, 'Company policies');
    assert.equal(renamed.body.knowledge_base.description, null);
    assert.equal((await call('DELETE', `/kb/${id}`)).status, 204);
    assert.equal((await call('GET', `/kb/${id}`)).status, 404);
    assert.equal((await call('GET', `/kb/${id}/documents`)).status, 404);
    assert.equal((await call('DELETE', `/kb/${id}`)).status, 404);
  });

  test('a manual document becomes ready and searchable, with ai.kb_ingest.completed', async () => {
    const kb = await newBase();
    const content = `${'Our office dog is called Biscuit. '.repeat(3)}\n\n${'Lorem ipsum dolor sit amet. '.repeat(80)}\n\nRefunds are issued within five business days of the return.`;
    const created = await call(
      'POST',
      `/kb/${kb}/documents`,
      { title: 'Returns policy', source_type: 'manual', content },
      { 'idempotency-key': 'doc-1' },
    );
    assert.equal(created.status, 201);
    const document = created.body.document;
    assert.equal(document.status, 'pending');
    assert.equal(document.kb_id, kb);
    assert.equal(document.source_type, 'manual');
    assert.equal(document.ingested_at, null);
    const replay = await call(
      'POST',
      `/kb/${kb}/documents`,
      { title: 'Returns policy', source_type: 'manual', content },
      { 'idempotency-key': 'doc-1' },
    );
    assert.equal(replay.body.document.id, document.id);
    assert.equal((await call('GET', `/kb/${kb}/documents`)).body.data.length, 1);

    const ready = await settled(call, kb, document.id);
    assert.equal(ready.status, 'ready');
    assert.equal(ready.error, null);
    assert.ok(ready.chunk_count >= 3, `chunks: ${ready.chunk_count}`);
    assert.equal(ready.character_count, normalizeText(content).length);
    assert.ok(ready.ingested_at);

    const found = await call('GET', `/kb/${kb}/search?q=${encodeURIComponent('refunds business days')}`);
    assert.equal(found.status, 200);
    assert.equal(found.body.query, 'refunds business days');
    assert.ok(found.body.count >= 1);
    const [best] = found.body.data;
    assert.equal(best.document_id, document.id);
    assert.equal(best.title, 'Returns policy');
    assert.match(best.snippet, /Refunds are issued/);
    assert.ok(best.score > 0);
    assert.equal((await call('GET', `/kb/${kb}/search?q=biscuit`)).body.data[0].chunk_index, 0);
    assert.equal((await call('GET', `/kb/${kb}/search?q=zeppelin`)).body.count, 0);

    const completed = (await eventsOf(call, 'ai.kb_ingest.completed')).filter(
      (event) => event.data.document_id === document.id,
    );
    assert.equal(completed.length, 1);
    assert.deepEqual(
      {
        kb_id: completed[0].data.kb_id,
        chunk_count: completed[0].data.chunk_count,
        character_count: completed[0].data.character_count,
      },
      { kb_id: kb, chunk_count: ready.chunk_count, character_count: ready.character_count },
    );
    const filtered = await call('GET', `/kb/${kb}/documents?status=ready`);
    assert.deepEqual(
      filtered.body.data.map((d: any) => d.id),
      [document.id],
    );
    assert.equal((await call('GET', `/kb/${kb}/documents?status=failed`)).body.data.length, 0);
  });

  test('bad documents are 400 validation_error naming the field, and change nothing', async () => {
    const kb = await newBase();
    const cases: [Record<string, unknown>, string][] = [
      [{ title: 'x', source_type: 'manual' }, 'content'],
      [{ title: 'x', source_type: 'manual', content: 'a'.repeat(200_001) }, 'content'],
      [{ title: 'x'.repeat(201), source_type: 'manual', content: 'a' }, 'title'],
      [{ title: 'x', source_type: 'url', source_url: 'ftp://example.com/a' }, 'source_url'],
      [{ title: 'x', source_type: 'url', source_url: '/relative' }, 'source_url'],
      [{ title: 'x', source_type: 'url' }, 'source_url'],
      [{ title: 'x', source_type: 'manual', content: 'a', source_url: 'https://example.com' }, 'source_url'],
      [
        { title: 'x', source_type: 'upload', storage_path: 'local://orgs/x/y', mime_type: 'text/plain' },
        'storage_path',
      ],
      [{ title: 'x', source_type: 'teletype', content: 'a' }, 'source_type'],
    ];
    for (const [body, field] of cases) {
      const reply = await call('POST', `/kb/${kb}/documents`, body);
      assert.equal(reply.status, 400, JSON.stringify(body).slice(0, 100));
      assert.equal(reply.body.error, 'validation_error');
      assert.ok(
        reply.body.details.fields.some((f: any) => f.field === field),
        `${field} in ${JSON.stringify(reply.body.details)}`,
      );
    }
    assert.equal((await call('GET', `/kb/${kb}/documents`)).body.data.length, 0);
    assert.equal(
      (await call('POST', `/kb/${newId()}/documents`, { title: 'x', source_type: 'manual', content: 'a' }))
        .status,
      404,
    );
  });

  test('a URL document is fetched, its HTML reduced to text, and searchable', async () => {
    const kb = await newBase();
    pages.pages['/pricing'] = {
      body: `<!doctype html><html><head><title>Pricing</title></head><body>
        <nav>Home | Products | Careers</nav>
        <article><h1>Pricing</h1><p>The starter plan costs nineteen dollars per month and includes three seats.</p>
        <p>The growth plan adds unlimited pipelines, priority support and a dedicated onboarding session.</p>
        <p>Every plan can be cancelled at any time from the billing page of the dashboard.</p></article>
        <script>var tracking = "secretword";</script></body></html>`,
    };
    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Pricing page',
      source_type: 'url',
      source_url: `${pages.url}/pricing`,
    });
    const ready = await settled(call, kb, body.document.id);
    assert.equal(ready.status, 'ready', ready.error);
    assert.equal(ready.source_url, `${pages.url}/pricing`);
    const found = await call('GET', `/kb/${kb}/search?q=starter+plan+seats`);
    assert.equal(found.body.data[0].document_id, body.document.id);
    assert.equal((await call('GET', `/kb/${kb}/search?q=secretword`)).body.count, 0, 'scripts are not text');
  });

  test('a 404 page fails the document with its error and ai.job.failed', async () => {
    const kb = await newBase();
    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Gone',
      source_type: 'url',
      source_url: `${pages.url}/missing`,
    });
    const failed = await settled(call, kb, body.document.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /answered HTTP 404/);
    assert.equal(pages.hits['/missing'], 1, 'a 404 is not retried');
    const events = (await eventsOf(call, 'ai.job.failed')).filter(
      (e) => e.data.document_id === body.document.id,
    );
    assert.equal(events.length, 1);
    assert.equal(events[0].data.job_type, 'kb_ingest');
    assert.equal(events[0].data.kb_id, kb);
    assert.equal(events[0].data.error, failed.error);
  });

  test('a passing failure (503) is retried on the schedule and then succeeds', async () => {
    const kb = await newBase();
    pages.pages['/flaky'] = [
      { status: 503, body: 'busy' },
      { type: 'text/plain', body: 'The flaky page finally answered with its text about turbines.' },
    ];
    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Flaky',
      source_type: 'url',
      source_url: `${pages.url}/flaky`,
    });
    const ready = await settled(call, kb, body.document.id);
    assert.equal(ready.status, 'ready', ready.error);
    assert.equal(pages.hits['/flaky'], 2);
    assert.equal((await call('GET', `/kb/${kb}/search?q=turbines`)).body.count, 1);
  });

  test('uploaded PDF and HTML files become searchable', async () => {
    const kb = await newBase();
    const pdfPath = await upload(t, call, kb, {
      filename: 'Employee Handbook (2026).pdf',
      mime_type: 'application/pdf',
      bytes: await fs.readFile(path.join(fixtures, 'handbook.pdf')),
    });
    assert.match(pdfPath, new RegExp(`^local://orgs/${tenant.orgId}/clients/${tenant.clientId}/kb/${kb}/`));
    const html = Buffer.from(
      '<html><body><main><h2>Parking</h2><p>Visitors park on level two of the garage behind the building.</p></main></body></html>',
    );
    const htmlPath = await upload(t, call, kb, {
      filename: 'parking.html',
      mime_type: 'text/html',
      bytes: html,
    });
    const pdfDoc = await call('POST', `/kb/${kb}/documents`, {
      title: 'Handbook',
      source_type: 'upload',
      storage_path: pdfPath,
      mime_type: 'application/pdf',
    });
    assert.equal(pdfDoc.status, 201);
    const htmlDoc = await call('POST', `/kb/${kb}/documents`, {
      title: 'Parking',
      source_type: 'upload',
      storage_path: htmlPath,
      mime_type: 'text/html',
      byte_size: html.length,
    });
    assert.equal((await settled(call, kb, pdfDoc.body.document.id)).status, 'ready');
    assert.equal((await settled(call, kb, htmlDoc.body.document.id)).status, 'ready');
    const holiday = await call('GET', `/kb/${kb}/search?q=holiday+requests`);
    assert.equal(holiday.body.data[0].document_id, pdfDoc.body.document.id);
    const parking = await call('GET', `/kb/${kb}/search?q=visitors+garage`);
    assert.equal(parking.body.data[0].document_id, htmlDoc.body.document.id);

    // A missing object fails the document rather than retrying forever.
    const missing = await call('POST', `/kb/${kb}/documents`, {
      title: 'Never uploaded',
      source_type: 'upload',
      storage_path: pdfPath.replace('Employee-Handbook', 'Other'),
      mime_type: 'application/pdf',
    });
    const failed = await settled(call, kb, missing.body.document.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /Nothing was uploaded/);
  });

  test('a storage path of another org or client, or with a trick, is refused and nothing is read', async () => {
    const kb = await newBase();
    const other = await createTenant(t.app);
    const otherKb = (await caller(t, other.client)('POST', '/kb', { name: 'Theirs' })).body.knowledge_base.id;
    const theirs = await upload(t, caller(t, other.client), otherKb, {
      filename: 'secret.txt',
      mime_type: 'text/plain',
      bytes: Buffer.from('The launch code is swordfish.'),
    });
    const base = `local://orgs/${tenant.orgId}/clients/${tenant.clientId}/kb/${kb}`;
    for (const storagePath of [
      theirs,
      theirs.replace(other.orgId, tenant.orgId),
      `${base}/../../../../../orgs/${other.orgId}/clients/${other.clientId}/kb/${otherKb}/x.txt`,
      `${base}/%2e%2e/x.txt`,
      `local://orgs/${tenant.orgId}/clients/${tenant.houseClientId}/kb/${kb}/x/a.txt`,
      `s3://bucket/orgs/${tenant.orgId}/clients/${tenant.clientId}/a.txt`,
      `${base}/a\\..\\b.txt`,
    ]) {
      const reply = await call('POST', `/kb/${kb}/documents`, {
        title: 'Sneaky',
        source_type: 'upload',
        storage_path: storagePath,
        mime_type: 'text/plain',
      });
      assert.equal(reply.status, 400, storagePath);
      assert.equal(reply.body.error, 'validation_error');
      assert.equal(reply.body.details.fields[0].field, 'storage_path');
    }
    assert.equal((await call('GET', `/kb/${kb}/documents`)).body.data.length, 0);

    const badUpload = await call('POST', `/kb/${kb}/uploads`, {
      filename: 'tool.exe',
      mime_type: 'application/x-msdownload',
      byte_size: 10,
    });
    assert.equal(badUpload.status, 400);
    assert.equal(badUpload.body.details.fields[0].field, 'mime_type');
    const huge = await call('POST', `/kb/${kb}/uploads`, {
      filename: 'big.pdf',
      mime_type: 'application/pdf',
      byte_size: 11 * 1024 * 1024,
    });
    assert.equal(huge.status, 400);
    assert.equal(huge.body.details.fields[0].field, 'byte_size');
  });

  test("client A's bases, documents and search results are invisible to client B", async () => {
    const kb = await newBase('Private');
    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Secret',
      source_type: 'manual',
      content: 'The quarterly numbers mention pelicans.',
    });
    await settled(call, kb, body.document.id);
    assert.equal((await call('GET', `/kb/${kb}/search?q=pelicans`)).body.count, 1);
    const stranger = await createTenant(t.app);
    for (const other of [caller(t, stranger.client), caller(t, tenant.agency)]) {
      assert.equal((await other('GET', `/kb/${kb}`)).status, 404);
      assert.equal((await other('GET', `/kb/${kb}/documents`)).status, 404);
      assert.equal((await other('GET', `/kb/${kb}/documents/${body.document.id}`)).status, 404);
      assert.equal((await other('GET', `/kb/${kb}/search?q=pelicans`)).status, 404);
      assert.equal((await other('DELETE', `/kb/${kb}/documents/${body.document.id}`)).status, 404);
      assert.equal(
        (await other('POST', `/kb/${kb}/documents`, { title: 'x', source_type: 'manual', content: 'y' }))
          .status,
        404,
      );
      assert.ok(!(await other('GET', '/kb?limit=200')).body.data.some((b: any) => b.id === kb));
      const ownKb = (await other('POST', '/kb', { name: 'Mine' })).body.knowledge_base.id;
      assert.equal((await other('GET', `/kb/${ownKb}/search?q=pelicans`)).body.count, 0);
    }
    assert.equal((await call('GET', `/kb/${kb}/documents/${body.document.id}`)).status, 200);
  });

  test('a deleted document leaves reads and search at once; the clean-up job removes its chunks', async () => {
    const kb = await newBase();
    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Temporary',
      source_type: 'manual',
      content: 'Walruses gather on the northern beach every spring.',
    });
    await settled(call, kb, body.document.id);
    const deleted = await call('DELETE', `/kb/${kb}/documents/${body.document.id}`);
    assert.equal(deleted.status, 200);
    assert.ok(deleted.body.document.deleted_at);
    assert.equal((await call('GET', `/kb/${kb}/documents/${body.document.id}`)).status, 404);
    assert.equal((await call('DELETE', `/kb/${kb}/documents/${body.document.id}`)).status, 404);
    assert.equal((await call('GET', `/kb/${kb}/search?q=walruses`)).body.count, 0);
    const chunks = () =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM kb_chunks WHERE document_id = ${body.document.id}`
        .execute(t.platform.db)
        .then((r) => r.rows[0].n);
    assert.ok((await chunks()) > 0);
    await purgeDeletedDocuments(t.platform.db, t.platform.providers.storage, t.platform.log);
    assert.equal(await chunks(), 0);
  });
});

describe('knowledge bases with the SSRF guard on', () => {
  let t: TestApp;
  let pages: PageServer;

  before(async () => {
    pages = await startPageServer();
    t = await buildTestApp({ OUTBOUND_ALLOW_PRIVATE: 'false', KB_INGEST_POLL_MS: '50' });
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await pages.close();
  });

  test('a URL pointing at a private address fails with a clear error and ai.job.failed', async () => {
    const tenant = await createTenant(t.app);
    const call = caller(t, tenant.client);
    pages.pages['/internal'] = { type: 'text/plain', body: 'internal admin data' };
    const kb = (await call('POST', '/kb', { name: 'Guarded' })).body.knowledge_base.id;
    for (const url of [
      `${pages.url}/internal`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
    ]) {
      const { body } = await call('POST', `/kb/${kb}/documents`, {
        title: 'Internal',
        source_type: 'url',
        source_url: url,
      });
      const failed = await settled(call, kb, body.document.id);
      assert.equal(failed.status, 'failed');
      assert.match(failed.error, /address; the service does not connect to it/);
    }
    assert.equal(pages.hits['/internal'], undefined, 'the private server was never reached');
    const events = await eventsOf(call, 'ai.job.failed');
    assert.equal(events.length, 3);
  });
});
