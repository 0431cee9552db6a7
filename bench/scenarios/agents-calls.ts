import type { BenchContext, Measurement, Section } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

const SEEDED_AGENTS = 500;
const SEEDED_CALLS = 100_000;
const DAYS = 100;
const LAST_DAY = '2026-06-30';

/**
 * Issue: agents and calls. Reading an agent by its current slug and by an alias (a past slug) against
 * the SELECT ceiling; and the daily-report list of calls (`start_date`/`end_date`, with `count`) on a
 * client of 100,000 calls spread over 100 days, in an org with a time zone.
 */
export default async function agentsCalls(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  await ctx.admin('PATCH', `/orgs/${orgId}`, { timezone: 'America/New_York' });
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  const { rows: clients } = await ctx.pool.query('SELECT house_client_id FROM orgs WHERE id = $1', [orgId]);
  const clientId = clients[0].house_client_id;
  await ctx.pool.query(
    `WITH made AS (
       INSERT INTO agents (id, org_id, client_id, name, slug, kind, labels)
       SELECT gen_random_uuid(), $1, $2, 'Seeded agent ' || g, 'seeded-agent-' || g, 'inbound_voice', ARRAY['seeded']
       FROM generate_series(1, ${SEEDED_AGENTS}) AS g
       RETURNING id, org_id, slug)
     INSERT INTO agent_slugs (org_id, slug, agent_id) SELECT org_id, slug, id FROM made`,
    [orgId, clientId],
  );
  const { agent } = await api('POST', '/agents', {
    name: 'Front desk',
    slug: 'front-desk',
    kind: 'inbound_voice',
  });
  await api('PATCH', '/agents/front-desk', { slug: 'reception' });

  // 1,000 calls a day over 100 days, one in ten with the agent, at millisecond times (as the API stores them).
  await ctx.pool.query(
    `INSERT INTO calls (id, org_id, client_id, direction, from_number, to_number, contact_phone, agent_id, status,
                        outcome, duration_seconds, cost_cents, started_at, answered_at, ended_at, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, CASE WHEN g % 3 = 0 THEN 'outbound' ELSE 'inbound' END,
            '+14155550100', '+14155550101', '+14155550100', CASE WHEN g % 10 = 0 THEN $3::uuid END,
            CASE WHEN g % 5 = 0 THEN 'no_answer' ELSE 'completed' END, 'answered', 60, 12, at, at, at, at, at
     FROM (SELECT g, date_trunc('milliseconds', $4::timestamptz - g * ($5::interval / ${SEEDED_CALLS})) AS at
           FROM generate_series(1, ${SEEDED_CALLS}) AS g) AS seeded`,
    [orgId, clientId, agent.id, `${LAST_DAY}T23:59:59-04:00`, `${DAYS} days`],
  );
  // One statement each: several in one query run as one transaction, where VACUUM cannot.
  for (const statement of ['VACUUM ANALYZE calls', 'ANALYZE agents', 'ANALYZE agent_slugs'])
    await ctx.pool.query(statement);
  const check = await api('GET', `/calls?start_date=${LAST_DAY}&end_date=${LAST_DAY}&limit=1`);
  const wholeRange = await api('GET', `/calls?start_date=2026-01-01&end_date=${LAST_DAY}&limit=1`);
  if (wholeRange.count !== SEEDED_CALLS)
    throw new Error(`expected ${SEEDED_CALLS} calls, counted ${wholeRange.count}`);

  const selectCeiling = await ctx.measure('ceiling: one SELECT by primary key', {
    url: `${ctx.ceilingUrl}/select`,
  });
  const bySlug = await ctx.measure('GET /v1/agents/{slug} (current slug)', {
    url: `${ctx.apiUrl}/v1/agents/reception`,
    headers,
  });
  const byAlias = await ctx.measure('GET /v1/agents/{slug} (alias of a renamed agent)', {
    url: `${ctx.apiUrl}/v1/agents/front-desk`,
    headers,
  });

  const calls = (label: string, query: string, connections: number): Promise<Measurement> =>
    ctx.measure(`GET /v1/calls?${label} (${connections} connection${connections > 1 ? 's' : ''})`, {
      url: `${ctx.apiUrl}/v1/calls?${query}`,
      headers,
      connections,
      durationSeconds: 6,
    });
  const oneDay = `start_date=${LAST_DAY}&end_date=${LAST_DAY}`;
  const day = await calls('one day', oneDay, 1);
  const dayLoaded = await calls('one day', oneDay, 10);
  const month = await calls('30 days', `start_date=2026-06-01&end_date=${LAST_DAY}`, 1);
  const all = await calls('all 100 days', `start_date=2026-01-01&end_date=${LAST_DAY}`, 1);
  const agentDays = await calls(
    '30 days, agent_id',
    `start_date=2026-06-01&end_date=${LAST_DAY}&agent_id=${agent.id}`,
    1,
  );

  return {
    title: `Agents and calls (${SEEDED_AGENTS} agents; ${SEEDED_CALLS.toLocaleString('en')} calls over ${DAYS} days)`,
    measurements: [selectCeiling, bySlug, byAlias, day, dayLoaded, month, all, agentDays],
    targets: [
      ratioTarget('GET /v1/agents/{slug} ÷ SELECT ceiling', bySlug, selectCeiling, 0.6),
      ratioTarget('GET /v1/agents/{alias} ÷ SELECT ceiling', byAlias, selectCeiling, 0.6),
      latencyTarget('GET /v1/calls?start_date&end_date p50 (one day, 1 connection)', day.p50Ms, 20),
      latencyTarget('GET /v1/calls?start_date&end_date p50 (all 100,000, 1 connection)', all.p50Ms, 20),
    ],
    notes: [
      'An agent read is one prepared statement: the id, or the slug among the live slugs and aliases, and the',
      'live aliases (`previous_slugs`), behind the key lookup and rate limit every route has.',
      `A page of calls (50) and its count run side by side; the day has ${check.count} calls. Days are New York`,
      "days (the org's time zone: one more primary-key read, of the org). The count sums the whole UTC days of",
      'the range from call_day_counts (kept by triggers) and counts only the partial days at its ends call by',
      'call, so 100 days cost about what one does. Figures are noisy: the machine is shared.',
    ],
  };
}
