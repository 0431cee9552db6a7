import { randomUUID } from 'node:crypto';
import type { BenchContext, Measurement, Section } from '../lib.ts';
import { latencyTarget, ratioTarget } from '../lib.ts';

const CONTACTS = 100_000;
const LIST_IDS = 10_000;

const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Anna',
  'Barbara',
  'Brian',
  'Carla',
  'Chen',
  'Dana',
  'David',
  'Elena',
  'Emil',
  'Fatima',
  'Frank',
  'Grace',
  'Hana',
  'Igor',
  'Ines',
  'Jamal',
  'Jana',
  'Kofi',
  'Laura',
  'Liam',
  'Maria',
  'Mario',
  'Nadia',
  'Noah',
  'Olga',
  'Omar',
  'Paula',
  'Pedro',
  'Quinn',
  'Rosa',
  'Sam',
  'Sofia',
  'Tariq',
  'Uma',
  'Victor',
  'Wen',
  'Yara',
  'Zoe',
];
const LAST_NAMES = [
  'Abbott',
  'Baker',
  'Castillo',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Hughes',
  'Ivanova',
  'Jensen',
  'Kowalski',
  'Lopez',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Petrov',
  'Quispe',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Underwood',
  'Varga',
  'Weber',
  'Xu',
  'Yilmaz',
  'Zhang',
  'Novak',
  'Silva',
  'Kim',
  'Haddad',
  'Murphy',
  'Larsen',
  'Costa',
  'Becker',
  'Ward',
  'Santos',
  'Horvat',
  'Lindqvist',
  'Mensah',
  'Odhiambo',
];

/**
 * Issue 3 (CRM): contacts on a tenant seeded with 100,000 contacts, against the SELECT and INSERT
 * ceilings measured in the same run; `q` search latency; a 10,000-id static-list add.
 */
export default async function crmContacts(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const { org } = await ctx.admin('GET', `/orgs/${orgId}`);
  const clientId: string = org.house_client_id;
  const notes: string[] = [];

  const seeded = Date.now();
  await seed(ctx, orgId, clientId);
  notes.push(
    `Seeding ${CONTACTS.toLocaleString('en')} contacts with emails and phones (SQL) took ${Date.now() - seeded} ms.`,
  );

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  const { contact } = await api('POST', '/crm/contacts', {
    email: 'hot.read@bench-company.example',
    phone: '+14155552671',
    first_name: 'Hot',
    last_name: 'Read',
    company_name: 'Bench Company',
  });

  const selectCeiling = await ctx.measure('SELECT by primary key (ceiling)', {
    url: `${ctx.ceilingUrl}/select`,
  });
  const getContact = await ctx.measure('GET /v1/crm/contacts/{id}', {
    url: `${ctx.apiUrl}/v1/crm/contacts/${contact.id}`,
    headers,
  });

  // measure() sends a JSON content type, so the ceiling's POST needs a JSON body too (else it is a 400).
  const insertCeiling = await ctx.measure('INSERT (ceiling)', {
    url: `${ctx.ceilingUrl}/insert`,
    method: 'POST',
    body: '{}',
  });
  let sequence = 0;
  const run = randomUUID().slice(0, 8);
  const postContact = await ctx.measure('POST /v1/crm/contacts (new identities)', {
    url: `${ctx.apiUrl}/v1/crm/contacts`,
    method: 'POST',
    headers,
    requests: [
      {
        method: 'POST',
        path: '/v1/crm/contacts',
        setupRequest: (request) => {
          sequence += 1;
          return {
            ...request,
            body: JSON.stringify({
              email: `new-${run}-${sequence}@bench-new.example`,
              first_name: 'New',
              last_name: `Contact ${sequence}`,
            }),
          };
        },
      },
    ],
  });

  // `q` is a latency target: one user searching (1 connection), and the same under 10 concurrent searches.
  const terms = ['ross', 'nakam', 'ana garc', 'zhang', 'ines'];
  const searchAt = (connections: number) => {
    let termIndex = 0;
    return ctx.measure(`GET /v1/crm/contacts?q= (${connections} connection${connections > 1 ? 's' : ''})`, {
      url: `${ctx.apiUrl}/v1/crm/contacts?q=ross`,
      headers,
      connections,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => {
            termIndex = (termIndex + 1) % terms.length;
            return { ...request, path: `/v1/crm/contacts?q=${encodeURIComponent(terms[termIndex])}` };
          },
        },
      ],
    });
  };
  const search = await searchAt(1);
  const searchLoaded = await searchAt(10);
  notes.push(`q terms cycled: ${terms.join(', ')} (2.5 % to 0.2 % of the tenant each).`);

  const { rows } = await ctx.pool.query<{ id: string }>(
    'SELECT id FROM contacts WHERE org_id = $1 AND client_id = $2 LIMIT $3',
    [orgId, clientId, LIST_IDS],
  );
  const ids = rows.map((row) => row.id);
  const timings: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const { list } = await api('POST', '/crm/lists', { name: `Bench static ${attempt}` });
    const started = performance.now();
    const result = await api('POST', `/crm/lists/${list.id}/members`, { contact_ids: ids });
    timings.push(Math.round(performance.now() - started));
    if (result.added !== LIST_IDS)
      throw new Error(`expected ${LIST_IDS} added, got ${JSON.stringify(result)}`);
  }
  const median = [...timings].sort((a, b) => a - b)[1];
  const listAdd: Measurement = {
    name: `POST /v1/crm/lists/{id}/members (${LIST_IDS.toLocaleString('en')} ids, median of 3)`,
    requestsPerSecond: 0,
    p50Ms: median,
    p99Ms: Math.max(...timings),
    errors: 0,
    non2xx: 0,
  };
  notes.push(`Static-list adds of ${LIST_IDS.toLocaleString('en')} ids took ${timings.join(', ')} ms.`);
  notes.push(
    'A contact create without an Idempotency-Key is one prepared statement that commits on its own (identity lookup, ' +
      'email and phone, contact and its contact.created event, in CTEs); the worker then relays the event. The INSERT ' +
      'ceiling is one autocommit INSERT of a 5-column row.',
  );

  return {
    title: 'CRM contacts (tenant of 100,000 contacts)',
    measurements: [selectCeiling, getContact, insertCeiling, postContact, search, searchLoaded, listAdd],
    targets: [
      ratioTarget('GET /v1/crm/contacts/{id} ÷ SELECT ceiling', getContact, selectCeiling, 0.8),
      ratioTarget('POST /v1/crm/contacts ÷ INSERT ceiling', postContact, insertCeiling, 0.5),
      latencyTarget('GET /v1/crm/contacts?q= p50 (1 connection)', search.p50Ms, 20),
      latencyTarget(`add ${LIST_IDS.toLocaleString('en')} ids to a static list`, median, 1000),
    ],
    notes,
  };
}

/**
 * 100,000 contacts with an email each and a phone for every other one. Statistics are gathered
 * after the contacts: without them, the foreign-key checks of the next inserts plan a scan per row.
 */
async function seed(ctx: BenchContext, orgId: string, clientId: string): Promise<void> {
  await ctx.pool.query(
    `INSERT INTO contacts (id, org_id, client_id, first_name, last_name, full_name, lifecycle_stage, tags, source,
       primary_email, primary_phone)
     SELECT gen_random_uuid(), $1, $2, f, l, f || ' ' || l,
       (ARRAY['lead', 'qualified', 'customer'])[1 + n % 3], ARRAY['seed'], 'bench',
       'seed-' || n || '@bench-seed.example',
       CASE WHEN n % 2 = 0 THEN '+1415' || lpad(n::text, 7, '0') END
     FROM generate_series(1, $3::int) n,
       LATERAL (SELECT ($4::text[])[1 + n % cardinality($4::text[])] AS f,
                       ($5::text[])[1 + (n / 7) % cardinality($5::text[])] AS l) names`,
    [orgId, clientId, CONTACTS, FIRST_NAMES, LAST_NAMES],
  );
  await ctx.pool.query('ANALYZE contacts');
  await ctx.pool.query(
    `INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary)
     SELECT gen_random_uuid(), org_id, client_id, id, primary_email, true
     FROM contacts WHERE org_id = $1 AND client_id = $2`,
    [orgId, clientId],
  );
  await ctx.pool.query(
    `INSERT INTO contact_phones (id, org_id, client_id, contact_id, phone_e164, is_primary)
     SELECT gen_random_uuid(), org_id, client_id, id, primary_phone, true
     FROM contacts WHERE org_id = $1 AND client_id = $2 AND primary_phone IS NOT NULL`,
    [orgId, clientId],
  );
  // A settled tenant: the trigram index's pending entries merged and the visibility map set, as
  // autovacuum leaves a table between bulk loads; otherwise it runs during the measurements.
  await ctx.pool.query('VACUUM ANALYZE contacts, contact_emails, contact_phones, companies');
}
