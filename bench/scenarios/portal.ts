import type { BenchContext, Measurement, Section } from '../lib.ts';
import { latencyTarget } from '../lib.ts';

/**
 * Issue 22: the portal's overview and a webhook's delivery log for a tenant with 100,000 contacts and
 * 100,000 deliveries (seeded with set-based SQL), loaded by 10 signed-in people at once, each with a
 * session of their own.
 */

const CONTACTS = 100_000;
const DELIVERIES = 100_000;
const SESSIONS = 10;
const PASSWORD = 'bench portal passphrase';

/** Accepts an invitation the way a browser does (its form, CSRF cookie and token); returns the session cookie. */
async function acceptInvitation(inviteUrl: string, apiUrl: string): Promise<string> {
  const url = `${apiUrl}${new URL(inviteUrl).pathname}`;
  const page = await fetch(url);
  const csrfCookie = page.headers
    .getSetCookie()
    .find((cookie) => cookie.startsWith('ap_csrf='))!
    .split(';')[0];
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: apiUrl },
    body: new URLSearchParams({ _csrf: token, password: PASSWORD }).toString(),
  });
  const session = response.headers.getSetCookie().find((cookie) => cookie.startsWith('ap_session='));
  if (response.status !== 303 || !session) throw new Error(`sign-in failed: ${response.status}`);
  return session.split(';')[0];
}

export default async function portal(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const { org } = await ctx.admin('GET', `/orgs/${orgId}`);
  const created = await fetch(`${ctx.apiUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/bench', events: ['contact.created'] }),
  });
  const webhookId = ((await created.json()) as { webhook: { id: string } }).webhook.id;

  await ctx.pool.query(
    `INSERT INTO contacts (id, org_id, client_id, full_name, first_name, last_name, source)
     SELECT gen_random_uuid(), $1, $2, 'Bench Contact ' || g, 'Bench', 'Contact ' || g, 'bench'
     FROM generate_series(1, $3::int) g`,
    [orgId, org.house_client_id, CONTACTS],
  );
  // A delivery each, one in ten dead-lettered, and its one attempt in the log.
  await ctx.pool.query(
    `WITH deliveries AS (
       INSERT INTO webhook_deliveries (id, org_id, subscription_id, event_id, event_type, event_created_at, status,
                                       attempts, scheduled_attempts, created_at)
       SELECT gen_random_uuid(), $1, $2, 'evt_bench_' || g, 'contact.created', now() - g * interval '1 second',
              CASE WHEN g % 10 = 0 THEN 'dead_letter' ELSE 'succeeded' END, 1, 1, now() - g * interval '1 second'
       FROM generate_series(1, $3::int) g
       RETURNING id, org_id, subscription_id, event_id, event_type, status, created_at)
     INSERT INTO webhook_delivery_attempts (id, org_id, subscription_id, delivery_id, event_id, event_type, attempt,
                                            status, response_status, duration_ms, created_at)
     SELECT gen_random_uuid(), org_id, subscription_id, id, event_id, event_type, 1, status,
            CASE WHEN status = 'succeeded' THEN 200 ELSE 500 END, 40, created_at
     FROM deliveries`,
    [orgId, webhookId, DELIVERIES],
  );
  // Settled as a live database would be: visibility map set, statistics current, the seed's dirty pages written.
  await ctx.pool.query('VACUUM ANALYZE contacts, webhook_deliveries, webhook_delivery_attempts');
  await ctx.pool.query('CHECKPOINT');

  const cookies: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const { invite_url } = await ctx.admin('POST', `/orgs/${orgId}/users`, {
      email: `bench-${i}-${Date.now()}@example.com`,
      role: i === 0 ? 'owner' : 'admin',
    });
    cookies.push(await acceptInvitation(invite_url, ctx.apiUrl));
  }

  /** The 10 people at once, each with its own session cookie. */
  const measureSessions = (name: string, url: string, durationSeconds?: number) =>
    ctx.measure(name, {
      url,
      connections: cookies.length,
      connectionHeaders: cookies.map((cookie) => ({ cookie })),
      durationSeconds,
    });
  // Warm-up (JIT, connection pools), not recorded.
  await measureSessions('warm-up', `${ctx.apiUrl}/portal`, 2);
  const overview = await measureSessions('GET /portal (overview), 10 sessions', `${ctx.apiUrl}/portal`);
  const log = await measureSessions(
    'GET /portal/webhooks/{id} (delivery log), 10 sessions',
    `${ctx.apiUrl}/portal/webhooks/${webhookId}`,
  );
  const failed = await measureSessions(
    'GET /portal/webhooks/{id}?status=dead_letter, 10 sessions',
    `${ctx.apiUrl}/portal/webhooks/${webhookId}?status=dead_letter`,
  );
  const ok = (m: Measurement) => m.errors === 0 && m.non2xx === 0;
  return {
    title: 'Portal (issue 22): pages of a tenant with 100,000 contacts and 100,000 deliveries',
    measurements: [overview, log, failed],
    targets: [overview, log].map((m) => {
      const target = latencyTarget(`${m.name}: p50`, m.p50Ms, 30);
      return { ...target, pass: target.pass && ok(m) };
    }),
    notes: [
      `${SESSIONS} people signed in through the invitation form, one session cookie per connection; pages rendered on the server (Preact to string).`,
    ],
  };
}
