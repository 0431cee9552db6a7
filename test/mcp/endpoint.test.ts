import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminCall, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { connect, type Era, resultBody, rpc, startMcpApp } from './support.ts';

const INITIALIZE = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('MCP endpoint: protocol, auth and transport rules', () => {
  let t: TestApp;
  let base: string;
  let endpoint: string;
  let tenant: TestTenant;

  before(async () => {
    ({ t, base, endpoint } = await startMcpApp({ MCP_ALLOWED_ORIGINS: 'https://app.example.com' }));
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  for (const era of ['legacy', 'modern'] as Era[]) {
    test(`${era} era: an official SDK client lists the tools and calls me.get`, async () => {
      const client = await connect(era, endpoint, tenant.agency);
      try {
        const { tools } = await client.listTools();
        const names = tools.map((tool) => tool.name);
        for (const name of ['me.get', 'events.list', 'events.get', 'testkit.widgets.create']) {
          assert.ok(names.includes(name), `${name} is listed`);
        }
        const result = await client.callTool({ name: 'me.get', arguments: {} });
        assert.equal(result.isError, undefined);
        const body = resultBody(result);
        assert.equal(body.tenant.org_id, tenant.orgId);
        assert.equal(body.api_key.kind, 'agency');
        assert.deepEqual(result.structuredContent, body);
      } finally {
        await client.close();
      }
    });

    test(`${era} era: X-Service-Client-Id is carried to the REST call`, async () => {
      const client = await connect(era, endpoint, tenant.agencyAsClient);
      try {
        const body = resultBody(await client.callTool({ name: 'me.get' }));
        assert.deepEqual(body.tenant, {
          org_id: tenant.orgId,
          client_id: tenant.clientId,
          is_client_scoped: true,
        });
      } finally {
        await client.close();
      }
    });

    test(`${era} era: connecting without a key or with a bad key fails`, async () => {
      await assert.rejects(connect(era, endpoint, {}));
      await assert.rejects(connect(era, endpoint, { authorization: `Bearer gc_live_${'A'.repeat(43)}` }));
    });
  }

  test('initialize negotiates every handshake revision from 2025-03-26 to 2025-11-25', async () => {
    for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
      const response = await rpc(endpoint, tenant.agency, INITIALIZE(version));
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.result.protocolVersion, version);
      assert.deepEqual(body.result.capabilities.tools, {});
      assert.equal(body.result.serverInfo.name, 'agency-platform');
      assert.equal(response.headers.get('mcp-session-id'), null, 'stateless: no session id');
    }
  });

  test('server/discover answers the 2026-07-28 revision', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const response = await rpc(
      endpoint,
      tenant.agency,
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
    );
    assert.equal(response.status, 200);
    const body = await response.json();
    // 2025-era revisions are negotiated through initialize, so discover lists the modern ones only.
    assert.ok(body.result.supportedVersions.includes('2026-07-28'));
    assert.equal(body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'agency-platform');
    assert.ok(body.result.capabilities.tools);
  });

  test('a raw 2026-07-28 tools/call (no handshake, version in _meta and headers) runs the tool', async () => {
    const response = await rpc(
      endpoint,
      tenant.agency,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {
          name: 'me.get',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'me.get' },
    );
    assert.equal(response.status, 200);
    assert.match(String(response.headers.get('content-type')), /application\/json/);
    const body = await response.json();
    assert.equal(body.result.structuredContent.tenant.org_id, tenant.orgId);
  });

  test('a missing or bad key is 401 with a plain WWW-Authenticate: Bearer', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Basic ${tenant.agencyKey}` },
    ];
    for (const headers of cases) {
      const response = await rpc(endpoint, headers, INITIALIZE('2025-06-18'));
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      const body = await response.json();
      assert.equal(body.error, 'unauthorized');
      assert.equal(typeof body.message, 'string');
    }
  });

  test('a client-bound key sending X-Service-Client-Id is refused as over REST', async () => {
    const response = await rpc(
      endpoint,
      { ...tenant.client, 'x-service-client-id': tenant.clientId },
      INITIALIZE('2025-06-18'),
    );
    assert.equal(response.status, 400);
    assert.equal((await response.json()).error, 'invalid_request');
  });

  test('a legacy SMS key is 403, as on every route but /me and /sms', async () => {
    const legacy = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'sms',
      kind: 'legacy_sms',
    });
    const response = await rpc(endpoint, { authorization: `Bearer ${legacy.key}` }, INITIALIZE('2025-06-18'));
    assert.equal(response.status, 403);
    assert.equal((await response.json()).error, 'forbidden');
  });

  test('OAuth discovery documents are 404, so clients do not start an OAuth flow', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/v1/mcp',
      '/v1/mcp/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
    ]) {
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 404, path);
      assert.equal((await response.json()).error, 'not_found');
    }
  });

  test('GET and DELETE are 405 with the error envelope, with or without a key', async () => {
    for (const method of ['GET', 'DELETE']) {
      for (const headers of [{}, tenant.agency]) {
        const response = await fetch(endpoint, {
          method,
          headers: { accept: 'text/event-stream', ...headers },
        });
        assert.equal(response.status, 405, method);
        assert.equal(response.headers.get('allow'), 'POST, OPTIONS');
        const body = await response.json();
        assert.equal(body.error, 'method_not_allowed');
        assert.match(body.message, /POST/);
      }
    }
  });

  test('a key in the query string is refused, with or without the header', async () => {
    for (const query of [
      `api_key=${tenant.agencyKey}`,
      `key=${tenant.agencyKey}`,
      'token=abc',
      'access_token=abc',
      `x=${tenant.agencyKey}`,
    ]) {
      for (const headers of [{}, tenant.agency]) {
        const response = await rpc(`${endpoint}?${query}`, headers, INITIALIZE('2025-06-18'));
        assert.equal(response.status, 400, query);
        const body = await response.json();
        assert.equal(body.error, 'invalid_request');
        assert.match(body.message, /Authorization: Bearer/);
      }
    }
  });

  test('an unknown query parameter is a 400 validation error', async () => {
    const response = await rpc(`${endpoint}?tool_name=underscore`, tenant.agency, INITIALIZE('2025-06-18'));
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.error, 'validation_error');
    assert.deepEqual(
      body.details.fields.map((field: { field: string }) => field.field),
      ['tool_name'],
    );
  });

  test('a browser Origin outside MCP_ALLOWED_ORIGINS is 403; an allowed one gets CORS headers', async () => {
    const refused = await rpc(
      endpoint,
      { ...tenant.agency, origin: 'https://evil.example' },
      INITIALIZE('2025-06-18'),
    );
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error, 'forbidden');
    assert.equal(refused.headers.get('access-control-allow-origin'), null);

    const allowed = await rpc(
      endpoint,
      { ...tenant.agency, origin: 'https://app.example.com' },
      INITIALIZE('2025-06-18'),
    );
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example.com');

    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(String(preflight.headers.get('access-control-allow-headers')), /authorization/);
    assert.match(String(preflight.headers.get('access-control-allow-headers')), /mcp-protocol-version/);

    const refusedPreflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(refusedPreflight.status, 403);
  });

  test('without an Origin header (a non-browser client) no origin rule applies', async () => {
    const response = await rpc(endpoint, tenant.agency, INITIALIZE('2025-06-18'));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
  });

  test('an unknown tool is a JSON-RPC invalid-params error', async () => {
    const response = await rpc(endpoint, tenant.agency, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'nope.nothing', arguments: {} },
    });
    const body = await response.json();
    assert.equal(body.error.code, -32602);
    assert.match(body.error.message, /nope\.nothing/);
  });

  test("a tool call counts against the key's rate limit through its REST call; listing does not", async () => {
    const limited = await createTenant(t.app, { rateLimit: 3 });
    const call = () =>
      rpc(endpoint, limited.agency, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'me.get', arguments: {} },
      });
    for (let i = 0; i < 3; i++) {
      const response = await call();
      assert.equal(response.headers.get('x-ratelimit-limit'), '3');
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(2 - i));
      assert.equal((await response.json()).result.isError, undefined);
    }
    const response = await call();
    assert.equal(response.status, 200);
    assert.ok(Number(response.headers.get('retry-after')) > 0);
    const { result } = await response.json();
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.error, 'rate_limited');

    const list = await rpc(endpoint, limited.agency, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
      params: {},
    });
    assert.equal(list.status, 200);
    assert.ok((await list.json()).result.tools.length > 0);
  });
});
