import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildTestApp, type TestApp } from '../helpers.ts';

describe('OpenAPI document', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('GET /v1/openapi.json is a valid OpenAPI 3.1.0 document, version 1.0.0', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json();
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.version, '1.0.0');
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test('every operation has a dotted operationId, a summary and tags; admin routes are not in it', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      assert.ok(!path.startsWith('/admin'), path);
      for (const [method, operation] of Object.entries<any>(item)) {
        assert.match(
          operation.operationId ?? '',
          /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/,
          `${method} ${path}`,
        );
        assert.ok(!ids.has(operation.operationId), `duplicate ${operation.operationId}`);
        ids.add(operation.operationId);
        assert.ok(operation.summary, `${method} ${path} summary`);
        assert.ok(operation.tags?.length, `${method} ${path} tags`);
      }
    }
    assert.ok(ids.has('me.get'));
  });

  test('the reference page wears the product name and works offline: its script is served locally', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/reference/' });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /html/);
    assert.match(response.body, /<title>Agency Platform API reference<\/title>/);
    assert.doesNotMatch(response.body, /swagger|Explore/i);
    // Every script and stylesheet the page loads is relative to it: nothing from a CDN.
    const sources = [...response.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(sources.length > 0);
    for (const source of sources) assert.doesNotMatch(source, /^(https?:)?\/\//, source);
    for (const source of sources) {
      const asset = await t.app.inject({
        method: 'GET',
        url: new URL(source, 'http://x/v1/reference/').pathname,
      });
      assert.equal(asset.statusCode, 200, source);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/reference' })).statusCode, 301);
  });

  test('every operation carries its example in curl and in the SDK', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const create = document.paths['/v1/crm/contacts'].post['x-codeSamples'];
    assert.deepEqual(
      create.map((s: any) => s.label),
      ['curl', 'SDK'],
    );
    assert.match(create[0].source, /^curl -X POST '.*\/v1\/crm\/contacts'/);
    assert.match(create[1].source, /await client\.crm\.contacts\.create\(/);
    const retrieve = document.paths['/v1/crm/contacts/{id}'].get['x-codeSamples'][1].source;
    assert.match(retrieve, /const contact = await client\.crm\.contacts\.retrieve\('<id>'\)/);
    for (const item of Object.values<Record<string, any>>(document.paths))
      for (const operation of Object.values<any>(item)) assert.equal(operation['x-codeSamples']?.length, 2);
  });
});
