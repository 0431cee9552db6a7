import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import type { BenchContext, Measurement, Section, Target } from '../lib.ts';

/**
 * Issue 17 (reliability): a soak. Contact creation at half the capacity measured first, for
 * `SOAK_SECONDS` (default 300; 30 for a sanity run), with every `contact.created` delivered to a local
 * webhook receiver. Reported per window: p99 and the resident memory of the api and worker
 * processes. Targets: RSS after the first minute (the first fifth of a shorter run) grows by at most
 * 10 %, p99 stays within 2x of the best window, and every event arrives.
 * Only in a full run or `npm run bench -- soak`: it takes the whole duration.
 */
const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const WINDOWS = 10;
const CONNECTIONS = 20;

function rssMb(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return Number.NaN;
  }
}

function p(sorted: number[], q: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export default async function soak(ctx: BenchContext): Promise<Section> {
  const run = randomUUID().slice(0, 8);
  /** Events of contacts created by the soak itself (not by the capacity measurement). */
  const events = new Set<string>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (Buffer.concat(chunks).toString('utf8').includes(`soak-${run}-`))
        events.add(String(req.headers['x-service-event-id']));
      res.writeHead(200).end();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const { headers } = await ctx.tenant();
  const subscribed = await fetch(`${ctx.apiUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiverUrl}/soak`, events: ['contact.created'] }),
  });
  if (subscribed.status !== 201) throw new Error(`subscribe: ${subscribed.status}`);

  let sequence = 0;
  const requests = (prefix: string): autocannon.Request[] => [
    {
      method: 'POST',
      path: '/v1/crm/contacts',
      setupRequest: (request) => {
        sequence += 1;
        return {
          ...request,
          body: JSON.stringify({ email: `${prefix}-${run}-${sequence}@soak.example`, first_name: 'Soak' }),
        };
      },
    },
  ];
  const capacity = await ctx.measure('POST /v1/crm/contacts, capacity', {
    url: `${ctx.apiUrl}/v1/crm/contacts`,
    method: 'POST',
    headers,
    requests: requests('capacity'),
    durationSeconds: 8,
  });
  const rate = Math.max(1, Math.floor(capacity.requestsPerSecond / 2));
  process.stdout.write(
    `soak: ${rate} contacts/s for ${SOAK_SECONDS} s (capacity ${capacity.requestsPerSecond}/s)\n`,
  );

  const windowMs = (SOAK_SECONDS * 1000) / WINDOWS;
  const started = Date.now();
  const latencies: number[][] = Array.from({ length: WINDOWS }, () => []);
  const statuses: number[] = Array.from({ length: WINDOWS }, () => 0);
  const rss: { api: number; worker: number }[][] = Array.from({ length: WINDOWS }, () => []);
  const windowOf = () => Math.min(WINDOWS - 1, Math.floor((Date.now() - started) / windowMs));
  const sampler = setInterval(() => {
    rss[windowOf()].push({ api: rssMb(ctx.pids?.api), worker: rssMb(ctx.pids?.worker) });
  }, 1000);
  const before = sequence;
  let finish: (result: autocannon.Result) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(
    {
      url: ctx.apiUrl,
      headers: { 'content-type': 'application/json', ...headers },
      requests: requests('soak'),
      connections: CONNECTIONS,
      overallRate: rate,
      duration: SOAK_SECONDS,
    },
    (error, result) => (error ? fail(error) : finish(result)),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    const w = windowOf();
    latencies[w].push(Math.round(responseTime * 10) / 10);
    if (statusCode !== 201) statuses[w] += 1;
  });
  const result = await done;
  clearInterval(sampler);
  const created = sequence - before - result.non2xx - result.errors - result.timeouts;

  // Every accepted contact's event reaches the receiver (the webhooks trail the writes a little).
  const deadline = Date.now() + 60_000;
  while (events.size < created && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  receiver.closeAllConnections();
  receiver.close();

  const measurements: Measurement[] = [capacity];
  const rows: { p99: number; api: number; worker: number }[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    const sorted = latencies[w].sort((a, b) => a - b);
    const mean = (key: 'api' | 'worker') =>
      Math.round((rss[w].reduce((sum, s) => sum + s[key], 0) / Math.max(1, rss[w].length)) * 10) / 10;
    rows.push({ p99: p(sorted, 0.99), api: mean('api'), worker: mean('worker') });
    measurements.push({
      name: `soak ${Math.round((w * windowMs) / 1000)}-${Math.round(((w + 1) * windowMs) / 1000)} s (RSS api ${mean('api')} MB, worker ${mean('worker')} MB)`,
      requestsPerSecond: Math.round(sorted.length / (windowMs / 1000)),
      p50Ms: p(sorted, 0.5),
      p99Ms: p(sorted, 0.99),
      errors: 0,
      non2xx: statuses[w],
    });
  }
  // The baseline: the window starting after the first minute, or after the first fifth of a short run.
  const base = Math.min(WINDOWS - 1, Math.max(1, Math.ceil(Math.min(60_000, SOAK_SECONDS * 200) / windowMs)));
  const growth = (key: 'api' | 'worker') => rows[WINDOWS - 1][key] / rows[base][key] - 1;
  const p99s = rows.slice(1).map((row) => row.p99);
  const p99Spread = Math.max(...p99s) / Math.max(1, Math.min(...p99s));
  const targets: Target[] = [
    ...(['api', 'worker'] as const).map((key) => ({
      name: `${key} RSS growth after the first minute`,
      pass: growth(key) <= 0.1,
      detail: `${rows[base][key]} MB -> ${rows[WINDOWS - 1][key]} MB (${Math.round(growth(key) * 1000) / 10} %, at most 10 %)`,
    })),
    {
      name: 'p99 flat (worst window / best window, after the first)',
      pass: p99Spread <= 2,
      detail: `${Math.round(p99Spread * 100) / 100}x (at most 2x); p99 per window ${p99s.join(', ')} ms`,
    },
    {
      name: 'every accepted contact delivered as a webhook',
      pass: events.size >= created,
      detail: `${events.size} of ${created} delivered; ${result.non2xx} non-2xx, ${result.errors} errors`,
    },
  ];
  return {
    title: `Soak: ${SOAK_SECONDS} s of contact creation at half capacity (${rate}/s) with webhooks`,
    measurements,
    targets,
    notes: [
      'Set SOAK_SECONDS (default 300) for a shorter sanity run: `SOAK_SECONDS=30 npm run bench -- soak`.',
      'RSS is the mean of one-second samples of /proc/<pid>/status in each window (Linux only).',
    ],
  };
}
