import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../src/platform/db/schema.ts';
import { emit } from '../../src/platform/events/emit.ts';
import type { BenchContext, Measurement, Section, Target } from '../lib.ts';
import { latencyTarget } from '../lib.ts';

/**
 * Issue: webhooks. A local receiver answering 200. Events are committed straight into the outbox
 * (as a module's transaction would) and timed from their commit to their arrival at the receiver.
 */

interface Arrivals {
  url: string;
  /** First arrival per event id (and path), in performance.now() milliseconds. */
  seen: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Arrivals> {
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = `${req.url}|${req.headers['x-service-event-id']}`;
    if (!seen.has(key)) seen.set(key, performance.now());
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

export default async function webhooks(ctx: BenchContext): Promise<Section> {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: ctx.pool }) });
  const receiver = await startReceiver();
  const { orgId, headers } = await ctx.tenant();
  const { org } = await ctx.admin('GET', `/orgs/${orgId}`);
  const scope = { orgId, clientId: org.house_client_id };

  const subscribe = async (path: string, events: string[]) => {
    const response = await fetch(`${ctx.apiUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}${path}`, events }),
    });
    if (response.status !== 201) throw new Error(`subscribe: ${response.status} ${await response.text()}`);
  };

  /** Commits `perTransaction` events per transaction; returns each event's commit time. */
  const commitEvents = async (type: string, count: number, perTransaction: number) => {
    const committed = new Map<string, number>();
    const ids: string[] = [];
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < Math.min(count, perTransaction); i++)
        ids.push((await emit(trx, scope, type, { n: i, name: 'Bench contact', email: 'b@example.com' })).id);
    });
    const at = performance.now();
    for (const id of ids) committed.set(id, at);
    return committed;
  };

  const measureRun = (
    name: string,
    path: string,
    committed: Map<string, number>,
    expected: number,
  ): Measurement & { latencies: number[] } => {
    const latencies: number[] = [];
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    for (const [id, at] of committed) {
      first = Math.min(first, at);
      const arrived = receiver.seen.get(`${path}|${id}`);
      if (arrived === undefined) continue;
      last = Math.max(last, arrived);
      latencies.push(arrived - at);
    }
    latencies.sort((a, b) => a - b);
    const seconds = Math.max(0.001, (last - first) / 1000);
    return {
      name,
      requestsPerSecond: Math.round(latencies.length / seconds),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      errors: expected - latencies.length,
      non2xx: 0,
      latencies,
    };
  };

  try {
    // 1. Burst: 10,000 events committed as fast as possible (100 per transaction, 4 at a time).
    await subscribe('/burst', ['contact.created']);
    const burstCommits = new Map<string, number>();
    const batches = Array.from({ length: 100 }, () => () => commitEvents('contact.created', 100, 100));
    const workers = Array.from({ length: 4 }, async () => {
      for (let next = batches.shift(); next; next = batches.shift())
        for (const [id, at] of await next()) burstCommits.set(id, at);
    });
    await Promise.all(workers);
    await waitFor(() => [...burstCommits.keys()].every((id) => receiver.seen.has(`/burst|${id}`)), 180_000);
    const burst = measureRun(
      '10,000 events to one subscription, burst (delivery rate)',
      '/burst',
      burstCommits,
      10_000,
    );

    // 2. Paced: events at a steady rate (10 per tick), the latency an event sees at that rate.
    const pacedRun = async (path: string, type: string, perSecond: number, total: number) => {
      await subscribe(path, [type]);
      const commits = new Map<string, number>();
      const tickMs = (10 * 1000) / perSecond;
      const started = performance.now();
      const pending: Promise<void>[] = [];
      for (let tick = 0; tick < total / 10; tick++) {
        const wait = started + tick * tickMs - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        pending.push(
          commitEvents(type, 10, 10).then((batch) => {
            for (const [id, at] of batch) commits.set(id, at);
          }),
        );
      }
      await Promise.all(pending);
      await waitFor(() => [...commits.keys()].every((id) => receiver.seen.has(`${path}|${id}`)), 180_000);
      return measureRun(
        `${total.toLocaleString('en')} events to one subscription at ${perSecond}/s`,
        path,
        commits,
        total,
      );
    };
    const paced = await pacedRun('/paced', 'deal.created', 1000, 10_000);
    const gentle = await pacedRun('/gentle', 'task.due_soon', 200, 2000);

    // 3. Fan-out: one event to 100 subscriptions, 20 times over.
    for (let i = 0; i < 100; i++) await subscribe(`/fan/${i}`, ['task.completed']);
    const fanLatencies: number[] = [];
    let fanDelivered = 0;
    let fanSeconds = 0;
    for (let round = 0; round < 20; round++) {
      const commits = await commitEvents('task.completed', 1, 1);
      const [[id, at]] = [...commits];
      const paths = Array.from({ length: 100 }, (_, i) => `/fan/${i}|${id}`);
      await waitFor(() => paths.every((key) => receiver.seen.has(key)), 30_000);
      const arrivals = paths.map((key) => receiver.seen.get(key)).filter((v): v is number => v !== undefined);
      fanDelivered += arrivals.length;
      fanSeconds += (Math.max(...arrivals) - at) / 1000;
      for (const arrived of arrivals) fanLatencies.push(arrived - at);
    }
    fanLatencies.sort((a, b) => a - b);
    const fanOut: Measurement = {
      name: 'one event fanned out to 100 subscriptions (×20)',
      requestsPerSecond: Math.round(fanDelivered / Math.max(0.001, fanSeconds)),
      p50Ms: percentile(fanLatencies, 50),
      p99Ms: percentile(fanLatencies, 99),
      errors: 2000 - fanDelivered,
      non2xx: 0,
    };

    const rateTarget = (label: string, m: Measurement, minimum: number): Target => ({
      name: label,
      pass: m.requestsPerSecond >= minimum && m.errors === 0,
      detail: `${m.requestsPerSecond} deliveries/s (target ≥ ${minimum})${m.errors ? `; ${m.errors} missing` : ''}`,
    });
    const strip = ({ latencies: _latencies, ...m }: Measurement & { latencies: number[] }): Measurement => m;
    return {
      title: 'Webhooks: delivery throughput and commit-to-arrival latency',
      measurements: [strip(burst), strip(paced), strip(gentle), fanOut],
      targets: [
        rateTarget('deliveries per second (burst of 10,000)', burst, 1000),
        latencyTarget('commit → arrival p50 at 1,000 events/s', paced.p50Ms, 200),
        rateTarget('deliveries per second (fan-out to 100)', fanOut, 1000),
      ],
      notes: [
        '"req/s" is deliveries per second at the receiver; p50/p99 are from the event’s commit to its arrival.',
        'Burst: the p50/p99 include the time an event waits behind the 10,000 committed at once.',
        'Every event goes through the outbox relay before a delivery exists: it reads the append-only event log in' +
          ' batches of up to 200 and the webhook fan-out inserts the deliveries of a batch in one statement.',
        'The receiver runs in the benchmark process on the same machine as the service and PostgreSQL.',
      ],
    };
  } finally {
    await receiver.close();
  }
}
