import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

/** The service listening on a real port, as SDK users reach it, with a tenant of its own. */
export interface SdkService {
  t: TestApp;
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  tenant: TestTenant;
  close(): Promise<void>;
}

export async function startService(overrides: Record<string, string> = {}): Promise<SdkService> {
  const t = await buildTestApp(overrides);
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await createTenant(t.app);
  return { t, baseUrl: `${address}/v1`, tenant, close: () => t.close() };
}

/** One request the proxy saw. */
export interface ProxiedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  at: number;
}

/**
 * What the proxy does with a request: forward it; or answer with this status, after forwarding the
 * request to the service (the change is made, its response is lost) or without forwarding it.
 */
export type ProxyAction =
  | 'forward'
  | { status: number; headers?: Record<string, string>; body?: string; afterForwarding?: boolean };

/** A local HTTP proxy in front of the service that fails chosen attempts, to exercise the SDK's retries. */
export interface FailingProxy {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

export async function startProxy(
  target: string,
  decide: (request: ProxiedRequest, index: number) => ProxyAction,
): Promise<FailingProxy> {
  const origin = new URL(target).origin;
  const requests: ProxiedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      at: Date.now(),
    };
    const action = decide(request, requests.push(request) - 1);
    if (action !== 'forward' && !action.afterForwarding) {
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      res.end(
        action.body ?? JSON.stringify({ error: 'service_unavailable', message: 'Injected by the proxy' }),
      );
      return;
    }
    const headers = Object.entries(req.headers).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && !HOP_BY_HOP.has(entry[0]),
    );
    const forwarded = await fetch(`${origin}${request.url}`, {
      method: request.method,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await forwarded.arrayBuffer());
    if (action !== 'forward') {
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      res.end(
        action.body ?? JSON.stringify({ error: 'service_unavailable', message: 'Injected by the proxy' }),
      );
      return;
    }
    const replyHeaders: Record<string, string> = {};
    forwarded.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') replyHeaders[name] = value;
    });
    res.writeHead(forwarded.status, replyHeaders);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
