import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Call } from '../crm/crm-client.ts';
import { eventually, type TestApp } from '../helpers.ts';

/** A local web server whose pages a test sets: `pages[path] = {status, type, body}` or a sequence of them. */
export interface PageServer {
  url: string;
  pages: Record<string, Page | Page[]>;
  hits: Record<string, number>;
  close(): Promise<void>;
}

export interface Page {
  status?: number;
  type?: string;
  body: string | Buffer;
}

export async function startPageServer(): Promise<PageServer> {
  const pages: PageServer['pages'] = {};
  const hits: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    const entry = pages[path];
    const page = Array.isArray(entry) ? (entry.length > 1 ? (entry.shift() as Page) : entry[0]) : entry;
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
      return;
    }
    res
      .writeHead(page.status ?? 200, { 'content-type': page.type ?? 'text/html; charset=utf-8' })
      .end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until the document leaves pending and processing, and returns it. */
export function settled(call: Call, kbId: string, docId: string, timeoutMs = 15_000): Promise<any> {
  return eventually(async () => {
    const { body } = await call('GET', `/kb/${kbId}/documents/${docId}`);
    return body.document.status === 'ready' || body.document.status === 'failed' ? body.document : undefined;
  }, timeoutMs);
}

/** Uploads `bytes` through the uploads endpoint and the signed local URL; returns the storage_path. */
export async function upload(
  t: TestApp,
  call: Call,
  kbId: string,
  file: { filename: string; mime_type: string; bytes: Buffer },
): Promise<string> {
  const created = await call('POST', `/kb/${kbId}/uploads`, {
    filename: file.filename,
    mime_type: file.mime_type,
    byte_size: file.bytes.length,
  });
  if (created.status !== 201) throw new Error(`uploads: ${created.status} ${JSON.stringify(created.body)}`);
  const { url, headers, storage_path } = created.body.upload;
  const put = await t.app.inject({
    method: 'PUT',
    url: new URL(url).pathname + new URL(url).search,
    headers,
    payload: file.bytes,
  });
  if (put.statusCode !== 200) throw new Error(`PUT: ${put.statusCode} ${put.body}`);
  return storage_path;
}
