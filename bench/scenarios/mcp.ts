import type { BenchContext, Measurement, Section, Target } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

const MODERN = '2026-07-28';

/** A JSON-RPC POST as a 2025-era client sends it after `initialize` (stateless: no session id). */
function legacyRequest(method: string, params: Record<string, unknown>) {
  return {
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  };
}

/** The same as a 2026-07-28 client sends it: the version in `_meta` and in the standard headers. */
function modernRequest(method: string, params: Record<string, unknown>, name?: string) {
  return {
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

/**
 * Issue: MCP endpoint. `tools/list` and a `tools/call` of `me.get` through POST /v1/mcp, in both
 * protocol eras, next to the REST call they wrap (GET /v1/me). Target: a tool call costs at most
 * twice the REST call, i.e. at least half its throughput.
 */
export default async function mcp(ctx: BenchContext): Promise<Section> {
  const { headers } = await ctx.tenant();
  const endpoint = `${ctx.apiUrl}/v1/mcp`;
  const post = async (name: string, request: { headers: Record<string, string>; body: string }) =>
    ctx.measure(name, {
      url: endpoint,
      method: 'POST',
      headers: { ...headers, ...request.headers },
      body: request.body,
    });

  // Every request below must succeed as MCP, not only as HTTP: a JSON-RPC error is also a 200.
  for (const request of [
    legacyRequest('tools/call', { name: 'me.get', arguments: {} }),
    modernRequest('tools/call', { name: 'me.get', arguments: {} }, 'me.get'),
  ]) {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers, ...request.headers },
      body: request.body,
    });
    const body = await response.json();
    if (!body.result || body.result.isError)
      throw new Error(`MCP warm-up call failed: ${JSON.stringify(body)}`);
  }

  const rest = await ctx.measure('GET /v1/me (REST)', { url: `${ctx.apiUrl}/v1/me`, headers });
  const list = await post('MCP tools/list, 2025-11-25', legacyRequest('tools/list', {}));
  const call = await post(
    'MCP tools/call me.get, 2025-11-25',
    legacyRequest('tools/call', { name: 'me.get', arguments: {} }),
  );
  const modernList = await post(`MCP tools/list, ${MODERN}`, modernRequest('tools/list', {}));
  const modernCall = await post(
    `MCP tools/call me.get, ${MODERN}`,
    modernRequest('tools/call', { name: 'me.get', arguments: {} }, 'me.get'),
  );

  const targets: Target[] = [
    ratioTarget('MCP tools/call me.get (2025 era) ÷ GET /v1/me', call, rest, 0.5),
    ratioTarget(`MCP tools/call me.get (${MODERN}) ÷ GET /v1/me`, modernCall, rest, 0.5),
    ...[list, modernList].map((measurement: Measurement) => ({
      name: `${measurement.name}: no errors`,
      pass: measurement.errors === 0 && measurement.non2xx === 0,
      detail: `${measurement.errors} errors, ${measurement.non2xx} non-2xx`,
    })),
    latencyTarget('MCP tools/call me.get p99 (2025 era)', call.p99Ms, 50),
  ];
  return {
    title: 'MCP endpoint: a tool call against the REST call it runs',
    measurements: [rest, list, call, modernList, modernCall],
    targets,
    notes: [
      'A tool call is one MCP POST that runs GET /v1/me in process with Fastify inject(): it pays the REST call, a second pass through Fastify for the MCP request, and the JSON-RPC envelope. Plain tools/call and tools/list messages are answered without building an SDK server per request (through the SDK they cost about 300 µs of CPU each).',
      'The floor is inject() itself: in process it costs about 60-70 µs of CPU against about 25 µs for the same REST request over a socket, so a tool call of the cheapest route stays well below half the REST throughput. Routes that do real work (SQL, FUEL) amortize this fixed cost.',
      'The tool catalog is generated once per (tool_names, toolsets, read_only) variant and served from memory.',
    ],
  };
}
