import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { emit } from '../../src/platform/events/emit.ts';
import type { TestApp } from '../helpers.ts';

/** One request a receiver got, with the exact bytes of its body. */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Handler = (request: ReceivedRequest, index: number) => Reply;

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startReceiver(handler: Handler = () => ({ status: 200 })): Promise<Receiver> {
  let current = handler;
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {}
      const request = { path: req.url ?? '/', headers: req.headers, raw, body, at: Date.now() };
      const index = requests.push(request) - 1;
      const reply = current(request, index);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (!reply.delayMs) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, reply.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      current = next;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a receiver does: recompute the signature over the raw bytes with node:crypto and compare in constant time. */
export function signatureMatches(request: ReceivedRequest, secret: string): boolean {
  const timestamp = String(request.headers['x-service-timestamp']);
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(request.raw).digest('hex')}`,
  );
  const given = Buffer.from(String(request.headers['x-service-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Emits an event as a module would: inside a transaction of the platform's database. */
export function emitEvent(
  t: TestApp,
  scope: { orgId: string; clientId: string },
  type: string,
  data: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
) {
  return t.platform.db.transaction().execute((trx) => emit(trx, scope, type, data, metadata));
}

export async function createWebhook(
  t: TestApp,
  headers: Record<string, string>,
  body: { url: string; events: string[]; description?: string },
): Promise<{ id: string; secret: string; webhook: any }> {
  const response = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: body });
  if (response.statusCode !== 201) throw new Error(`create webhook: ${response.statusCode} ${response.body}`);
  const { webhook, secret } = response.json();
  return { id: webhook.id, secret, webhook };
}

export async function deliveryLog(
  t: TestApp,
  headers: Record<string, string>,
  webhookId: string,
  query = '',
): Promise<any[]> {
  const response = await t.app.inject({
    method: 'GET',
    url: `/v1/webhooks/${webhookId}/deliveries?limit=200${query}`,
    headers,
  });
  if (response.statusCode !== 200) throw new Error(`deliveries: ${response.statusCode} ${response.body}`);
  return response.json().data;
}
