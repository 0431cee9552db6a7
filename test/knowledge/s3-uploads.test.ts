import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { purgeDeletedDocuments } from '../../src/modules/knowledge/ingest.ts';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp } from '../helpers.ts';
import { type S3StandIn, startS3StandIn } from '../s3-stand-in.ts';
import { settled } from './support.ts';

describe('knowledge-base uploads to S3', () => {
  let t: TestApp;
  let s3: S3StandIn;

  before(async () => {
    s3 = await startS3StandIn();
    t = await buildTestApp({
      STORAGE_PROVIDER: 's3',
      S3_BUCKET: s3.bucket,
      S3_REGION: s3.region,
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      KB_INGEST_POLL_MS: '50',
    });
    await t.startWorker();
  });
  after(async () => {
    await t.close();
    await s3.close();
  });

  test('a file PUT to the presigned URL is ingested from the bucket; deleting its document removes the object', async () => {
    const tenant = await createTenant(t.app);
    const call = caller(t, tenant.client);
    const kb = (await call('POST', '/kb', { name: 'S3' })).body.knowledge_base.id;
    const bytes = Buffer.from(
      '# Warranty\n\nEvery blender carries a **two-year** warranty against motor failure.\n',
    );
    const created = await call('POST', `/kb/${kb}/uploads`, {
      filename: 'warranty.md',
      mime_type: 'text/markdown',
      byte_size: bytes.length,
    });
    assert.equal(created.status, 201);
    const { url, headers, storage_path } = created.body.upload;
    assert.equal(
      storage_path.startsWith(`s3://${s3.bucket}/orgs/${tenant.orgId}/clients/${tenant.clientId}/kb/${kb}/`),
      true,
    );
    const put = await fetch(url, { method: 'PUT', headers, body: bytes });
    assert.equal(put.status, 200);

    const { body } = await call('POST', `/kb/${kb}/documents`, {
      title: 'Warranty',
      source_type: 'upload',
      storage_path,
      mime_type: 'text/markdown',
    });
    const document = await settled(call, kb, body.document.id);
    assert.equal(document.status, 'ready', document.error);
    const found = await call('GET', `/kb/${kb}/search?q=blender+warranty`);
    assert.equal(found.body.data[0].document_id, body.document.id);
    assert.doesNotMatch(found.body.data[0].snippet, /\*\*/);

    const key = storage_path.slice(`s3://${s3.bucket}/`.length);
    assert.ok(s3.objects.has(key));
    await call('DELETE', `/kb/${kb}/documents/${body.document.id}`);
    await purgeDeletedDocuments(t.platform.db, t.platform.providers.storage, t.platform.log);
    assert.equal(s3.objects.has(key), false);
  });
});
