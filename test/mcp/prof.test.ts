import { test } from 'node:test';
import { createTenant } from '../helpers.ts';
import { startMcpApp } from './support.ts';

test('prof', async () => {
  const { t } = await startMcpApp();
  const tenant = await createTenant(t.app);
  const legacy = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'me.get', arguments: {} } };
  const modern = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'me.get',
      arguments: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const h = {
    ...tenant.agency,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const cases: [string, () => Promise<unknown>][] = [
    ['rest', () => t.app.inject({ method: 'GET', url: '/v1/me', headers: tenant.agency })],
    [
      'legacy',
      () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/mcp',
          headers: { ...h, 'mcp-protocol-version': '2025-11-25' },
          payload: JSON.stringify(legacy),
        }),
    ],
    [
      'legacy-list',
      () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/mcp',
          headers: { ...h, 'mcp-protocol-version': '2025-11-25' },
          payload: JSON.stringify({ ...legacy, method: 'tools/list', params: {} }),
        }),
    ],
    [
      'modern',
      () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/mcp',
          headers: {
            ...h,
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'me.get',
          },
          payload: JSON.stringify(modern),
        }),
    ],
  ];
  for (const [name, fn] of cases) {
    const r: any = await fn();
    if (r.statusCode !== 200) throw new Error(name + r.body);
    for (let i = 0; i < 300; i++) await fn();
    const n = Number(process.env.N ?? 2000);
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    console.log(name, Number(process.hrtime.bigint() - start) / n / 1000, 'us/op');
  }
  await t.close();
});
