import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BenchContext, Section } from '../lib.ts';

/**
 * Issue 25: webhooks keep pace with writes. Contacts are created at full speed for 10 s with one
 * subscription to `contact.created`; the receiver answers 200. Each delivery is timed to its arrival
 * from two starts, both before the commit: the contact's `created_at` (taken by the api just before
 * it sends the create's statement; same machine, same clock), the commit → arrival as an upper
 * bound, and the moment its create request was sent (which adds the request's queueing and the
 * create's whole response time). "Drain" is how long after the last create the last delivery arrived.
 */
const SECONDS = 10;
const DRAIN_LIMIT_MS = 120_000;

export default async function contactsWebhooks(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const sentAt = new Map<string, number>();
  const arrivals: { email: string; at: number; fromWrittenMs: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const arrivedAt = Date.now();
      const data = JSON.parse(Buffer.concat(chunks).toString('utf8')).data;
      if (typeof data?.email === 'string')
        arrivals.push({ email: data.email, at, fromWrittenMs: arrivedAt - Date.parse(data.created_at) });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/contacts`;

  try {
    const subscribed = await fetch(`${ctx.apiUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver, events: ['contact.created'] }),
    });
    if (subscribed.status !== 201)
      throw new Error(`subscribe: ${subscribed.status} ${await subscribed.text()}`);

    const run = randomUUID().slice(0, 8);
    let sequence = 0;
    const creates = await ctx.measure('POST /v1/crm/contacts, full speed, with a subscription', {
      url: `${ctx.apiUrl}/v1/crm/contacts`,
      method: 'POST',
      headers,
      durationSeconds: SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/v1/crm/contacts',
          setupRequest: (request) => {
            sequence += 1;
            const email = `hook-${run}-${sequence}@bench-new.example`;
            sentAt.set(email, performance.now());
            return {
              ...request,
              body: JSON.stringify({ email, first_name: 'Hook', last_name: `${sequence}` }),
            };
          },
        },
      ],
    });
    const loadEnded = performance.now();
    // Creates the load generator gave up on at its end may still commit: count again until it holds.
    const created = async () =>
      (
        await ctx.pool.query<{ created: number }>(
          'SELECT count(*)::int AS created FROM contacts WHERE org_id = $1',
          [orgId],
        )
      ).rows[0].created;
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    let expected = await created();
    for (;;) {
      while (arrivals.length < expected && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const now = await created();
      if (now === expected || Date.now() >= deadline) break;
      expected = now;
    }
    const twice = arrivals.length - new Set(arrivals.map(({ email }) => email)).size;

    // Where the time goes, from the rows' own times: the event's (its create's statement), its delivery
    // row's (the relay's fan-out) and its attempt's (the record after the receiver answered).
    const { rows: stages } = await ctx.pool.query<{ relay: number; send: number; receiver: number }>(
      `SELECT
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at)) * 1000) AS relay,
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.created_at - d.created_at)) * 1000) AS send,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS receiver
      FROM webhook_deliveries d JOIN event_log e ON e.org_id = d.org_id AND e.id = d.event_id
        JOIN webhook_delivery_attempts a ON a.org_id = d.org_id AND a.delivery_id = d.id
      WHERE d.org_id = $1`,
      [orgId],
    );
    const latencies = arrivals.map(({ email, at }) => at - (sentAt.get(email) ?? at)).sort((a, b) => a - b);
    const fromWritten = arrivals.map((arrival) => arrival.fromWrittenMs).sort((a, b) => a - b);
    const during = arrivals.filter(({ at }) => at <= loadEnded).length;
    const last = arrivals.reduce((max, { at }) => Math.max(max, at), loadEnded);
    const drainMs = Math.round(last - loadEnded);
    const percentile = (sorted: number[], p: number) =>
      Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
    const pick = (p: number) => percentile(latencies, p);
    const written = (p: number) => percentile(fromWritten, p);
    const deliveriesPerSecond = Math.round(during / SECONDS);
    return {
      title: 'Webhooks while contacts are created at full speed (issue 25)',
      measurements: [
        creates,
        {
          name: 'contact.created deliveries (contact written → arrival: commit → arrival, upper bound)',
          requestsPerSecond: deliveriesPerSecond,
          p50Ms: written(0.5),
          p99Ms: written(0.99),
          errors: Math.max(0, expected - arrivals.length),
          non2xx: 0,
        },
        {
          name: 'contact.created deliveries (create request sent → arrival)',
          requestsPerSecond: deliveriesPerSecond,
          p50Ms: pick(0.5),
          p99Ms: pick(0.99),
          errors: Math.max(0, expected - arrivals.length),
          non2xx: 0,
        },
      ],
      targets: [
        {
          name: 'deliveries per second during the load',
          detail: `${deliveriesPerSecond} deliveries/s for ${creates.requestsPerSecond} creates/s (target ≥ 1,500, or every create delivered)`,
          pass: deliveriesPerSecond >= 1500 || deliveriesPerSecond >= creates.requestsPerSecond * 0.95,
        },
        {
          name: 'commit → arrival p50 (from the contact written)',
          detail: `${written(0.5)} ms (target < 200 ms; from the request sent: ${pick(0.5)} ms)`,
          pass: written(0.5) < 200,
        },
        {
          name: 'no backlog: the last delivery after the last create',
          detail: `${drainMs} ms (target < 1,000 ms)`,
          pass: drainMs < 1000 && arrivals.length >= expected,
        },
      ],
      notes: [
        `${arrivals.length} deliveries of ${expected} contacts created, ${twice} of them a second time; the receiver runs in the benchmark process.`,
        'The target of 1,500 deliveries/s is met either by reaching it or by delivering every create while creates run slower than that.',
        `Where the time goes (p50): event written → its delivery row ${stages[0].relay} ms (the relay and fan-out); delivery row → attempt recorded ${stages[0].send} ms, of which the receiver's answer ${stages[0].receiver} ms.`,
      ],
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
