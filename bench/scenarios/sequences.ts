import type { BenchContext, Measurement, Section, Target } from '../lib.ts';

/**
 * Issue 15 (sequences): 100,000 enrollments due at one tick, simulator providers; the time until all have
 * run their step (target: within two ticks of 60 s, i.e. ≥ 1,000 steps/s), and no step sent twice.
 * `BENCH_SEQUENCE_ENROLLMENTS` runs it smaller (a sanity run). Issue 26: a list-driven enrollment of
 * 10,000 contacts added to a followed list at once (`listDriven`, run first, in an org of its own).
 */
export default async function sequences(ctx: BenchContext): Promise<Section> {
  const lists = await listDriven(ctx);
  const steps = await dueSteps(ctx);
  return {
    ...steps,
    title: 'Sequences: one tick of due steps; list-driven enrollment',
    measurements: [...steps.measurements, lists.measurement],
    targets: [...steps.targets, ...lists.targets],
    notes: [...(steps.notes ?? []), ...lists.notes],
  };
}

const LIST_SIZE = 10_000;
const TICK_MS = 60_000;

/**
 * 10,000 contacts added to a static list a sequence follows, in one request: the time until all are
 * enrolled (target: within one 60 s tick of the add, whatever the tick's phase) and no one enrolled twice.
 */
async function listDriven(
  ctx: BenchContext,
): Promise<{ measurement: Measurement; targets: Target[]; notes: string[] }> {
  const { orgId, headers } = await ctx.tenant();
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const { rows: clients } = await ctx.pool.query<{ id: string }>(
    'SELECT house_client_id AS id FROM orgs WHERE id = $1',
    [orgId],
  );
  const { rows: contacts } = await ctx.pool.query<{ id: string }>(
    `INSERT INTO contacts (id, org_id, client_id, first_name, last_name, full_name, primary_email)
     SELECT gen_random_uuid(), $1, $2, 'Member', n::text, 'Member ' || n, 'member' || n || '@bench.test'
     FROM generate_series(1, $3) AS n RETURNING id`,
    [orgId, clients[0].id, LIST_SIZE],
  );
  const list = (await api('POST', '/crm/lists', { name: 'Bench list', emit_flow_triggers: true })).list;
  const sequence = (
    await api('POST', '/sequences', {
      name: 'Bench list ladder',
      status: 'active',
      list_id: list.id,
      steps: [{ kind: 'email', wait_minutes: 1440, subject: 'Hi', body: 'Hello {{first_name}}.' }],
    })
  ).sequence;
  // The link's first sync (an empty list) is done before the add.
  for (;;) {
    const { rows } = await ctx.pool.query('SELECT list_synced_version FROM sequences WHERE id = $1', [
      sequence.id,
    ]);
    if (rows[0].list_synced_version !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const addStarted = Date.now();
  await api('POST', `/crm/lists/${list.id}/members`, { contact_ids: contacts.map((c) => c.id) });
  const added = new Date();
  const addMs = added.getTime() - addStarted;

  const deadline = Date.now() + 5 * 60_000;
  let enrolled = 0;
  while (Date.now() < deadline) {
    const { rows } = await ctx.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM sequence_enrollments WHERE org_id = $1 AND sequence_id = $2',
      [orgId, sequence.id],
    );
    enrolled = Number(rows[0].n);
    if (enrolled >= LIST_SIZE) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const { rows } = await ctx.pool.query<{
    n: string;
    contacts: string;
    first: Date;
    last: Date;
    events: string;
  }>(
    `SELECT count(*) AS n, count(DISTINCT contact_id) AS contacts, min(enrolled_at) AS first,
            max(enrolled_at) AS last,
            (SELECT count(*) FROM events WHERE org_id = $1 AND type = 'sequence.enrollment.created') AS events
     FROM sequence_enrollments WHERE org_id = $1 AND sequence_id = $2`,
    [orgId, sequence.id],
  );
  const stats = rows[0];
  const workMs = stats.last.getTime() - stats.first.getTime();
  const totalMs = stats.last.getTime() - added.getTime();
  const duplicates = Number(stats.n) - Number(stats.contacts);
  const perSecond = Math.round(Number(stats.n) / Math.max(workMs / 1000, 0.001));
  return {
    measurement: {
      name: `${LIST_SIZE} contacts added at once to a followed list, enrolled by the list pass`,
      requestsPerSecond: perSecond,
      p50Ms: 0,
      p99Ms: 0,
      errors: LIST_SIZE - Number(stats.contacts),
      non2xx: duplicates,
    },
    targets: [
      {
        // The first pass after the add comes at the tick's phase (0-60 s): the target is that this one
        // pass enrolls everyone, in less than a tick, so nothing spills into the next tick.
        name: 'list-driven enrollment of 10,000 contacts added at once completes within one sequence tick',
        pass: Number(stats.contacts) === LIST_SIZE && workMs <= TICK_MS,
        detail: `${stats.contacts} of ${LIST_SIZE} enrolled by one pass of ${(workMs / 1000).toFixed(1)} s, which began ${((totalMs - workMs) / 1000).toFixed(1)} s after the add (the tick's phase)`,
      },
      {
        name: 'each contact enrolled once, with one event',
        pass: duplicates === 0 && Number(stats.events) === Number(stats.n),
        detail: `${stats.n} enrollments, ${stats.contacts} contacts, ${stats.events} sequence.enrollment.created events`,
      },
    ],
    notes: [
      `List-driven row: req/s is enrollments per second from the first to the last; errors: contacts not enrolled; non-2xx: duplicates. The add itself (one request of 10,000 ids) took ${(addMs / 1000).toFixed(1)} s.`,
    ],
  };
}

async function dueSteps(ctx: BenchContext): Promise<Section> {
  const size = Number(process.env.BENCH_SEQUENCE_ENROLLMENTS ?? 100_000);
  const { orgId, headers } = await ctx.tenant();
  const { rows: clients } = await ctx.pool.query<{ id: string }>(
    'SELECT house_client_id AS id FROM orgs WHERE id = $1',
    [orgId],
  );
  const clientId = clients[0].id;
  // Step 0 is due at once; step 1 a day later, so the run measures one step per enrollment.
  const created = await fetch(`${ctx.apiUrl}/v1/sequences`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Bench ladder',
      status: 'active',
      steps: [
        { kind: 'email', wait_minutes: 0, subject: 'Hi {{first_name|there}}', body: 'Hello {{full_name}}.' },
        { kind: 'email', wait_minutes: 1440, subject: 'Again', body: 'Hello again.' },
      ],
    }),
  });
  if (created.status !== 201) throw new Error(`sequence: ${created.status} ${await created.text()}`);
  const sequenceId = (await created.json()).sequence.id as string;

  // Contacts and their enrollments written in bulk: the scenario measures the tick, not the enrollment API.
  await ctx.pool.query(
    `INSERT INTO contacts (id, org_id, client_id, first_name, last_name, full_name, primary_email)
     SELECT gen_random_uuid(), $1, $2, 'Lead', n::text, 'Lead ' || n, 'lead' || n || '@bench.test'
     FROM generate_series(1, $3) AS n`,
    [orgId, clientId, size],
  );
  const { rows: seeded } = await ctx.pool.query<{ at: Date }>(
    `WITH enrolled AS (
       INSERT INTO sequence_enrollments (id, org_id, client_id, sequence_id, contact_id, next_run_at)
       SELECT gen_random_uuid(), org_id, client_id, $3, id, now()
       FROM contacts WHERE org_id = $1 AND client_id = $2
       RETURNING 1)
     SELECT now() AS at FROM enrolled LIMIT 1`,
    [orgId, clientId, sequenceId],
  );
  const dueAt = seeded[0].at;
  await ctx.pool.query('VACUUM ANALYZE sequence_enrollments');

  const deadline = Date.now() + 10 * 60_000;
  let sent = 0;
  while (Date.now() < deadline) {
    const { rows } = await ctx.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM sequence_step_sends WHERE org_id = $1',
      [orgId],
    );
    sent = Number(rows[0].n);
    if (sent >= size) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const { rows } = await ctx.pool.query<{ first: Date; last: Date; keys: string; emails: string }>(
    `SELECT min(sent_at) AS first, max(sent_at) AS last, count(DISTINCT cause_key) AS keys,
            (SELECT count(*) FROM email_messages m
              WHERE m.key IN (SELECT cause_key FROM sequence_step_sends WHERE org_id = $1)) AS emails
     FROM sequence_step_sends WHERE org_id = $1`,
    [orgId],
  );
  const { first, last } = rows[0];
  const runMs = last.getTime() - first.getTime();
  const totalMs = last.getTime() - dueAt.getTime();
  const stepsPerSecond = Math.round(sent / Math.max(runMs / 1000, 0.001));
  const duplicates = sent - Number(rows[0].keys);
  return {
    title: 'Sequences: one tick of due steps',
    measurements: [
      {
        name: `${sent} email steps (simulator) run by one worker`,
        requestsPerSecond: stepsPerSecond,
        p50Ms: 0,
        p99Ms: 0,
        errors: size - sent,
        non2xx: duplicates,
      },
    ],
    targets: [
      {
        name: 'all steps run within two 60 s ticks of falling due',
        pass: sent === size && totalMs <= 120_000,
        detail: `${sent} of ${size} in ${(totalMs / 1000).toFixed(1)} s after due (first tick included)`,
      },
      {
        name: '≥ 1,000 steps/s once the tick runs',
        pass: stepsPerSecond >= 1000,
        detail: `${stepsPerSecond} steps/s over ${(runMs / 1000).toFixed(1)} s`,
      },
      {
        name: 'no step sent twice',
        pass: duplicates === 0 && Number(rows[0].emails) === sent,
        detail: `${sent} step rows, ${rows[0].keys} distinct keys, ${rows[0].emails} emails recorded`,
      },
    ],
    notes: [
      'req/s column: steps per second from the first send to the last; errors: steps not run; non-2xx: duplicates.',
      'Each step is one transaction: lock the enrollment, read the contact, check the unsubscribe list, record the ' +
        "email (the simulator's row), the timeline activity, the step's send row, advance the enrollment.",
    ],
  };
}
