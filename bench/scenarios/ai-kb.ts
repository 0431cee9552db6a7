import { Kysely, PostgresDialect } from 'kysely';
import { readBriefSource } from '../../src/modules/ai-jobs/store.ts';
import type { Database } from '../../src/platform/db/schema.ts';
import { BuiltinLlm } from '../../src/providers/llm/builtin.ts';
import type { BriefSource } from '../../src/providers/llm/index.ts';
import { type BenchContext, latencyTarget, ratioTarget, type Section, type Target } from '../lib.ts';

const DOCUMENTS = 40;
const DOCUMENT_CHARACTERS = 200_000;
const SEARCH_CHUNKS = 10_000;
const WORDS =
  'refund shipping order contract agent policy invoice delivery customer support account renewal warranty pricing onboarding'.split(
    ' ',
  );

/** Paragraphs of varied sentences, `characters` long, different for each `seed`. */
function prose(characters: number, seed: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let n = 0; length < characters; n++) {
    const words = Array.from({ length: 8 + (n % 9) }, (_, w) => WORDS[(n * 7 + w * 3 + seed) % WORDS.length]);
    const sentence = `${words.join(' ')} ${seed}x${n}.${n % 6 === 5 ? '\n\n' : ' '}`;
    parts.push(sentence);
    length += sentence.length;
  }
  return parts.join('').slice(0, characters);
}

/**
 * Issue: AI gists and knowledge bases. Gist cache hits against the SELECT ceiling; ingestion throughput
 * of 200,000-character manual documents by the one worker process; KB search p50 over 10,000 chunks.
 */
export default async function aiKb(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const json = { ...headers, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${ctx.apiUrl}/v1${path}`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  await ctx.admin('POST', `/orgs/${orgId}/fuel`, { amount: 1000 });

  // A contact with what a gist reads: company, phone, open deal, activities, a task.
  const { contact } = await post('/crm/contacts', {
    email: 'ada@bench.example',
    phone: '+14155550101',
    full_name: 'Ada Bench',
    title: 'Head of Operations',
    company_name: 'Bench Industries',
  });
  await post('/crm/deals', { name: 'Renewal 2027', amount: 48_000, primary_contact_id: contact.id });
  for (const subject of ['Intro call', 'Demo', 'Pricing questions'])
    await post('/crm/activities', { activity_type: 'call', contact_id: contact.id, subject });
  await post('/crm/tasks', { title: 'Send the proposal', contact_id: contact.id });
  const gistUrl = `${ctx.apiUrl}/v1/ai/contacts/${contact.id}/gist`;
  await post(`/ai/contacts/${contact.id}/gist`, {});

  const selectCeiling = await ctx.measure('ceiling: one SELECT by primary key', {
    url: `${ctx.ceilingUrl}/select`,
  });
  const contactRead = await ctx.measure('GET /v1/crm/contacts/{id} (the same record, for comparison)', {
    url: `${ctx.apiUrl}/v1/crm/contacts/${contact.id}`,
    headers,
  });
  const gistHit = await ctx.measure('POST /v1/ai/contacts/{id}/gist (cache hit)', {
    url: gistUrl,
    method: 'POST',
    headers,
    body: '{}',
  });

  // Ingestion: the documents are written not yet due, then made due at once, and timed until all are ready.
  const { knowledge_base: kb } = await post('/kb', { name: 'Bench ingestion' });
  const { rows: tenantRows } = await ctx.pool.query('SELECT house_client_id FROM orgs WHERE id = $1', [
    orgId,
  ]);
  const clientId = tenantRows[0].house_client_id;
  for (let i = 0; i < DOCUMENTS; i++)
    await ctx.pool.query(
      `INSERT INTO kb_documents (id, org_id, client_id, kb_id, title, source_type, content, status, lease_until)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, 'manual', $5, 'pending', now() + interval '1 day')`,
      [orgId, clientId, kb.id, `Document ${i}`, prose(DOCUMENT_CHARACTERS, i)],
    );
  const started = performance.now();
  await ctx.pool.query(`UPDATE kb_documents SET lease_until = now() WHERE kb_id = $1`, [kb.id]);
  for (;;) {
    const { rows } = await ctx.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'ready')::int AS ready, count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM kb_documents WHERE kb_id = $1`,
      [kb.id],
    );
    if (rows[0].failed) throw new Error(`${rows[0].failed} bench documents failed`);
    if (rows[0].ready === DOCUMENTS) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const megabytesPerSecond = (DOCUMENTS * DOCUMENT_CHARACTERS) / 1_000_000 / seconds;

  // Search: 10,000 chunks of ~1,000 characters in one base, 200 ready documents.
  const { knowledge_base: searchKb } = await post('/kb', { name: 'Bench search' });
  await ctx.pool.query(
    `INSERT INTO kb_documents (id, org_id, client_id, kb_id, title, source_type, content, status, chunk_count, ingested_at)
     SELECT gen_random_uuid(), $1, $2, $3, 'Seeded document ' || g, 'manual', '', 'ready', 50, now()
     FROM generate_series(1, ${SEARCH_CHUNKS / 50}) AS g`,
    [orgId, clientId, searchKb.id],
  );
  const chunkTexts = Array.from({ length: 50 }, (_, i) => prose(1000, i * 13));
  await ctx.pool.query(
    `INSERT INTO kb_chunks (document_id, chunk_index, org_id, client_id, kb_id, content)
     SELECT d.id, i, d.org_id, d.client_id, d.kb_id, ($4::text[])[i + 1]
     FROM kb_documents d CROSS JOIN generate_series(0, 49) AS i
     WHERE d.org_id = $1 AND d.client_id = $2 AND d.kb_id = $3`,
    [orgId, clientId, searchKb.id, chunkTexts],
  );
  await ctx.pool.query('ANALYZE kb_chunks; ANALYZE kb_documents');
  const search = await ctx.measure('GET /v1/kb/{id}/search, selective query (10,000 chunks, 1 connection)', {
    url: `${ctx.apiUrl}/v1/kb/${searchKb.id}/search?q=${encodeURIComponent('"warranty pricing" 7x12')}`,
    headers,
    connections: 1,
  });
  const broad = await ctx.measure('GET /v1/kb/{id}/search?q=refund, matches every chunk (1 connection)', {
    url: `${ctx.apiUrl}/v1/kb/${searchKb.id}/search?q=refund`,
    headers,
    connections: 1,
  });

  // A pre-call brief's service time: its source read and the builtin model, for a contact with 200 activities.
  const { contact: busy } = await post('/crm/contacts', {
    email: 'busy@bench.example',
    full_name: 'Bo Busy',
  });
  for (let i = 0; i < 200; i++)
    await post('/crm/activities', {
      activity_type: ['call', 'sms', 'note'][i % 3],
      direction: i % 2 ? 'inbound' : 'outbound',
      contact_id: busy.id,
      body: `Interaction ${i}: ${prose(300, i)}`,
      performed_at: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
    });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: ctx.pool }) });
  const llm = new BuiltinLlm();
  const briefTimes: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    const source = await readBriefSource(db, { orgId, clientId }, busy.id);
    await llm.brief({ ...(source as BriefSource), purpose: 'Renewal' });
    briefTimes.push(performance.now() - started);
  }
  briefTimes.sort((a, b) => a - b);
  const briefP50 = briefTimes[Math.floor(briefTimes.length / 2)];

  const targets: Target[] = [
    latencyTarget(
      'pre-call brief of a contact with 200 activities (builtin model, service time p50)',
      briefP50,
      50,
    ),
    ratioTarget('gist cache hits vs one SELECT', gistHit, selectCeiling, 0.3),
    {
      name: 'ingestion of 200,000-character manual documents, one worker',
      pass: megabytesPerSecond >= 5,
      detail: `${DOCUMENTS} documents in ${seconds.toFixed(2)} s = ${megabytesPerSecond.toFixed(1)} MB/s (target ≥ 5)`,
    },
    latencyTarget('KB search p50 over 10,000 chunks (selective query)', search.p50Ms, 20),
    latencyTarget('KB search p50 over 10,000 chunks (query matching most chunks)', broad.p50Ms, 20),
  ];
  return {
    title: 'AI gists and knowledge bases',
    measurements: [selectCeiling, contactRead, gistHit, search, broad],
    targets,
    notes: [
      "A gist hit is a key read: the contact's source version (bumped by triggers on every table a gist reads)",
      'and the gist stamped with that version; the source is rebuilt and hashed only when the version moved.',
      'Ingestion runs in the worker process: normalising and chunking in Node, the full-text vectors in PostgreSQL.',
      'A pre-call brief is timed in the bench process: its source (one statement, the newest 10 activities) and the builtin model.',
    ],
  };
}
