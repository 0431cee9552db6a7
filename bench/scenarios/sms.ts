import { randomUUID } from 'node:crypto';
import { type BenchContext, latencyTarget, type Measurement, ratioTarget, type Section } from '../lib.ts';

/**
 * Issue 12 (SMS): accepted sends per second (202: the message, its conversation, the FUEL debit)
 * against the INSERT ceiling of the same run, and the simulator round trip from accept to
 * `delivered` (the worker's send loop, then its delivery-report loop) under that load.
 */
export default async function sms(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  await ctx.admin('POST', `/orgs/${orgId}/numbers`, { number: '+12025550150' });
  await ctx.admin('POST', `/orgs/${orgId}/fuel`, { amount: 100_000_000, reason: 'bench' });
  const notes: string[] = [];

  const insertCeiling = await ctx.measure('INSERT (ceiling)', {
    url: `${ctx.ceilingUrl}/insert`,
    method: 'POST',
    body: '{}',
  });
  let sequence = 0;
  const run = randomUUID().slice(0, 8);
  const started = new Date();
  const send = await ctx.measure('POST /v1/sms/messages (a new recipient each)', {
    url: `${ctx.apiUrl}/v1/sms/messages`,
    method: 'POST',
    headers,
    requests: [
      {
        method: 'POST',
        path: '/v1/sms/messages',
        setupRequest: (request) => {
          sequence += 1;
          // A valid US number per request: 415 area, exchanges from 200 up.
          const to = `+1415${String(2_000_000 + sequence)}`;
          return { ...request, body: JSON.stringify({ to, body: `Bench ${run} message ${sequence}` }) };
        },
      },
    ],
  });

  // Wait for the worker to deliver everything accepted (the simulator reports after 200 ms).
  const deadline = Date.now() + 120_000;
  let pending = 0;
  for (;;) {
    const { rows } = await ctx.pool.query<{ pending: string }>(
      `SELECT count(*) AS pending FROM sms_messages WHERE org_id = $1 AND status NOT IN ('delivered', 'failed', 'undelivered')`,
      [orgId],
    );
    pending = Number(rows[0].pending);
    if (pending === 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const { rows } = await ctx.pool.query<{ p50: number; p99: number; total: string; drained: number }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - created_at)) * 1000 AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - created_at)) * 1000 AS p99,
            count(*) AS total,
            extract(epoch FROM max(updated_at) - $2::timestamptz) * 1000 AS drained
     FROM sms_messages WHERE org_id = $1 AND status = 'delivered'`,
    [orgId, started],
  );
  const roundTrip: Measurement = {
    name: 'accept → delivered (simulator, 200 ms delivery delay)',
    requestsPerSecond: 0,
    p50Ms: Math.round(rows[0].p50 ?? 0),
    p99Ms: Math.round(rows[0].p99 ?? 0),
    errors: pending,
    non2xx: 0,
  };
  notes.push(
    `${rows[0].total} messages accepted and delivered; the last was delivered ${Math.round(rows[0].drained)} ms ` +
      `after the load began (${pending} still undelivered after the wait).`,
    'A send is one transaction: the sender and reference checks, the conversation upsert, the message row, ' +
      'then the FUEL debit as its last statement (the org balance row is locked from there to the commit). ' +
      'The worker claims due messages in batches under a lease and applies the held delivery reports the same way.',
  );

  return {
    title: 'SMS sending',
    measurements: [insertCeiling, send, roundTrip],
    targets: [
      ratioTarget('POST /v1/sms/messages ÷ INSERT ceiling', send, insertCeiling, 0.3),
      latencyTarget('accept → delivered p50 (simulator)', roundTrip.p50Ms, 1000),
    ],
    notes,
  };
}
