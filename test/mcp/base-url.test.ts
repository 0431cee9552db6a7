import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { connect, type McpClient, resultBody, startMcpApp } from './support.ts';

/** SPEC.md's `{base_url}` ends with `/v1`: operators set PUBLIC_BASE_URL either way. */
for (const publicBaseUrl of [
  'https://api.example.com/v1',
  'https://api.example.com/v1/',
  'https://api.example.com/',
]) {
  describe(`PUBLIC_BASE_URL=${publicBaseUrl}`, () => {
    let t: TestApp;
    let endpoint: string;
    let tenant: TestTenant;
    let client: McpClient;

    before(async () => {
      ({ t, endpoint } = await startMcpApp({ PUBLIC_BASE_URL: publicBaseUrl }));
      tenant = await createTenant(t.app);
      client = await connect('legacy', endpoint, tenant.agency);
    });
    after(async () => {
      await client.close();
      await t.close();
    });

    test('the OpenAPI document names the service once, and keeps every path under /v1', async () => {
      const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      assert.deepEqual(document.servers, [{ url: 'https://api.example.com' }]);
      assert.ok(document.paths['/v1/crm/contacts'], Object.keys(document.paths).slice(0, 5).join(', '));
      assert.ok(!Object.keys(document.paths).some((path) => path.startsWith('/crm/')));
    });

    test('the MCP catalog keeps every tool, and a tool call reaches its route', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((tool: { name: string }) => tool.name);
      assert.ok(names.includes('crm.contacts.list'), `${names.length} tools`);
      assert.ok(names.includes('me.get'));
      assert.ok(names.length > 30);
      const me = resultBody(await client.callTool({ name: 'me.get', arguments: {} }));
      assert.equal(me.tenant.org_id, tenant.orgId);
    });

    test('docs search links point at the docs site, not under /v1', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/v1/docs/search?q=webhook' });
      assert.equal(response.statusCode, 200);
      const [hit] = response.json().data;
      assert.match(hit.url, /^https:\/\/api\.example\.com\/docs\/[a-z-]+\/[a-z0-9-]+$/);
    });
  });
}

describe('the MCP catalog does not depend on the OpenAPI servers', () => {
  test('a base URL with a path prefix changes links only', async () => {
    const { t, endpoint } = await startMcpApp({ PUBLIC_BASE_URL: 'https://example.com/agency/v1' });
    try {
      const tenant = await createTenant(t.app);
      const client = await connect('modern', endpoint, tenant.agency);
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((tool: { name: string }) => tool.name === 'crm.contacts.create'));
      } finally {
        await client.close();
      }
      const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      assert.deepEqual(document.servers, [{ url: 'https://example.com/agency' }]);
    } finally {
      await t.close();
    }
  });
});
