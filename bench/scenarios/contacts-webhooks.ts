import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BenchContext, Section } from '../lib.ts';

/**
 * Issue 25: webhooks keep pace with writes. Contacts are created at full speed for 10 s with one
 * subscription to `contact.created`; the receiver answers 200. Each delivery is timed from the moment
 * its create request was sent (an upper bound of commit → arrival: it includes the create's own
 * response time) to its arrival; "drain" is how long after the last create the last delivery arrived.
 */
const SECONDS = 10;
const DRAIN_LIMIT_MS = 120_000;

export default async function contactsWebhooks(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const sentAt = new Map<string, number>();
  const arrivals: { email: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const email = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.email;
      if (typeof email === 'string') arrivals.push({ email, at });
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
    const { rows } = await ctx.pool.query<{ created: number }>(
      'SELECT count(*)::int AS created FROM contacts WHERE org_id = $1',
      [orgId],
    );
    const expected = rows[0].created;
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    while (arrivals.length < expected && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));

    const latencies = arrivals.map(({ email, at }) => at - (sentAt.get(email) ?? at)).sort((a, b) => a - b);
    const during = arrivals.filter(({ at }) => at <= loadEnded).length;
    const last = arrivals.reduce((max, { at }) => Math.max(max, at), loadEnded);
    const drainMs = Math.round(last - loadEnded);
    const pick = (p: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
    const deliveriesPerSecond = Math.round(during / SECONDS);
    return {
      title: 'Webhooks while contacts are created at full speed (issue 25)',
      measurements: [
        creates,
        {
          name: 'contact.created deliveries (commit → arrival, upper bound)',
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
          name: 'request sent → delivery p50',
          detail: `${pick(0.5)} ms (target < 200 ms)`,
          pass: pick(0.5) < 200,
        },
        {
          name: 'no backlog: the last delivery after the last create',
          detail: `${drainMs} ms (target < 1,000 ms)`,
          pass: drainMs < 1000 && arrivals.length >= expected,
        },
      ],
      notes: [
        `${arrivals.length} deliveries of ${expected} contacts created; the receiver runs in the benchmark process.`,
        'The target of 1,500 deliveries/s is met either by reaching it or by delivering every create while creates run slower than that.',
      ],
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
