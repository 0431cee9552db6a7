import type { BenchContext, Section } from '../lib.ts';

const SEEDED_DEALS = 20_000;
const SEEDED_ACTIVITIES = 100_000;

/**
 * Issue: CRM deals, activities and tasks. On a tenant seeded with 20,000 deals and 100,000 activities:
 * reading a deal against the SELECT ceiling, creating deals (transaction, event included) against the
 * INSERT ceiling, and the p50 of one contact's timeline page.
 */
export default async function crmDeals(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const pipelines = await fetch(`${ctx.apiUrl}/v1/crm/pipelines`, { headers }).then((r) => r.json());
  const pipeline = pipelines.data[0];
  const { rows: clients } = await ctx.pool.query('SELECT house_client_id FROM orgs WHERE id = $1', [orgId]);
  const clientId = clients[0].house_client_id;
  const { rows: contacts } = await ctx.pool.query(
    `INSERT INTO contacts (id, org_id, client_id, full_name) VALUES (gen_random_uuid(), $1, $2, 'Timeline Contact')
     RETURNING id`,
    [orgId, clientId],
  );
  const contactId = contacts[0].id;
  await ctx.pool.query(
    `INSERT INTO deals (id, org_id, client_id, name, pipeline_id, stage_id, amount)
     SELECT gen_random_uuid(), $1, $2, 'Seeded deal ' || g, $3, $4, g
     FROM generate_series(1, ${SEEDED_DEALS}) AS g`,
    [orgId, clientId, pipeline.id, pipeline.stages[0].id],
  );
  // One activity in a hundred is the timeline contact's: 1,000 entries spread through 100,000.
  await ctx.pool.query(
    `INSERT INTO activities (id, org_id, client_id, activity_type, contact_id, subject, performed_at)
     SELECT gen_random_uuid(), $1, $2, 'note', CASE WHEN g % 100 = 0 THEN $3::uuid END, 'Seeded ' || g,
            now() - g * interval '1 minute'
     FROM generate_series(1, ${SEEDED_ACTIVITIES}) AS g`,
    [orgId, clientId, contactId],
  );
  await ctx.pool.query('ANALYZE deals; ANALYZE activities');
  const { rows: sample } = await ctx.pool.query(
    'SELECT id FROM deals WHERE org_id = $1 ORDER BY id LIMIT 1 OFFSET $2',
    [orgId, Math.floor(SEEDED_DEALS / 2)],
  );

  const selectCeiling = await ctx.measure('ceiling: one SELECT by primary key', {
    url: `${ctx.ceilingUrl}/select`,
  });
  const insertCeiling = await ctx.measure('ceiling: one INSERT', {
    url: `${ctx.ceilingUrl}/insert`,
    method: 'POST',
    // A JSON content type with an empty body is a 400 in Fastify: send an empty object.
    body: '{}',
  });
  const getDeal = await ctx.measure('GET /v1/crm/deals/{id}', {
    url: `${ctx.apiUrl}/v1/crm/deals/${sample[0].id}`,
    headers,
  });
  const createDeal = await ctx.measure('POST /v1/crm/deals (deal.created included)', {
    url: `${ctx.apiUrl}/v1/crm/deals`,
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Bench deal', amount: 1200, tags: ['bench'] }),
  });
  const logActivity = await ctx.measure('POST /v1/crm/activities (no event)', {
    url: `${ctx.apiUrl}/v1/crm/activities`,
    method: 'POST',
    headers,
    body: JSON.stringify({ activity_type: 'note', contact_id: contactId, subject: 'Bench note' }),
  });
  const timeline = await ctx.measure('GET /v1/crm/activities?contact_id= (timeline page of 50)', {
    url: `${ctx.apiUrl}/v1/crm/activities?contact_id=${contactId}`,
    headers,
  });
  return {
    title: `CRM deals and activities (${SEEDED_DEALS.toLocaleString('en')} deals, ${SEEDED_ACTIVITIES.toLocaleString('en')} activities)`,
    measurements: [selectCeiling, insertCeiling, getDeal, createDeal, logActivity, timeline],
    // The issue sets no targets for deals and activities: these figures are reported for comparison.
    targets: [],
    notes: [
      'A deal creation is one transaction: default-pipeline lookup, INSERT and the event row;',
      'an activity creation is one transaction with one INSERT and no event.',
    ],
  };
}
