import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type autocannon from 'autocannon';
import pg from 'pg';
import { v7 } from 'uuid';
import type { BenchContext, Measurement, Section } from '../lib.ts';

/**
 * Issue 10 (the write path): where the time of a contact create goes. Not part of the figures of
 * docs/performance.md: it runs the create's SQL straight from a pg pool (no HTTP, no Kysely) in
 * several shapes, against the INSERT ceiling's SQL run the same way, and measures the CPU that the
 * API process and PostgreSQL spend per create through HTTP.
 */
const DURATION_MS = 6000;
const CONCURRENCY = 50;

async function loop(_pool: pg.Pool, name: string, once: (n: number) => Promise<void>): Promise<Measurement> {
  let done = 0;
  let errors = 0;
  let n = 0;
  const latencies: number[] = [];
  const end = Date.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const started = performance.now();
        try {
          await once(n++);
          done += 1;
          latencies.push(performance.now() - started);
        } catch (error) {
          if (errors++ === 0) process.stderr.write(`${name}: ${error}\n`);
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  process.stdout.write(`${name}: ${Math.round(done / (DURATION_MS / 1000))}/s\n`);
  return {
    name,
    requestsPerSecond: Math.round(done / (DURATION_MS / 1000)),
    p50Ms: Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0),
    p99Ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    errors,
    non2xx: 0,
  };
}

const UPSERT = `
    WITH found AS (
      SELECT 'email' AS matched_by, contact_id FROM contact_emails
        WHERE org_id = $2 AND client_id = $3 AND email = $4
      UNION ALL
      SELECT 'phone', contact_id FROM contact_phones
        WHERE org_id = $2 AND client_id = $3 AND phone_e164 = $5
    ), contact AS (
      INSERT INTO contacts (id, org_id, client_id, full_name, first_name, last_name, title, lifecycle_stage,
        company_id, owner_user_id, tags, source, primary_email, primary_phone, created_at, updated_at)
      SELECT $1::uuid, $2::uuid, $3::uuid, $6::text, $7::text, $8::text, null, null,
        null, null, '{}'::text[], null, $4::text, $5::text, $9::timestamptz, $9::timestamptz
      WHERE NOT EXISTS (SELECT 1 FROM found)
      RETURNING id
    ), email AS (
      INSERT INTO contact_emails (id, org_id, client_id, contact_id, email, is_primary, source, created_at, updated_at)
      SELECT $10::uuid, $2::uuid, $3::uuid, contact.id, $4::text, true, null, $9::timestamptz, $9::timestamptz
      FROM contact WHERE $4::text IS NOT NULL
      ON CONFLICT (org_id, client_id, email) DO NOTHING
      RETURNING id
    ), phone AS (
      INSERT INTO contact_phones (id, org_id, client_id, contact_id, phone_e164, is_primary, source, created_at, updated_at)
      SELECT $11::uuid, $2::uuid, $3::uuid, contact.id, $5::text, true, null, $9::timestamptz, $9::timestamptz
      FROM contact WHERE $5::text IS NOT NULL
      ON CONFLICT (org_id, client_id, phone_e164) DO NOTHING
      RETURNING id
    )`;
const UPSERT_SELECT = `
    SELECT
      (SELECT contact_id FROM found WHERE matched_by = 'email') AS email_contact_id,
      (SELECT contact_id FROM found WHERE matched_by = 'phone') AS phone_contact_id,
      EXISTS (SELECT 1 FROM contact) AS contact_inserted,
      EXISTS (SELECT 1 FROM email) AS email_inserted,
      EXISTS (SELECT 1 FROM phone) AS phone_inserted`;
const EVENT = `INSERT INTO event_log (xid, seq, id, org_id, client_id, type, data, metadata)
    SELECT pg_current_xact_id(), nextval('event_seq'), $1::text, $2::uuid, $3::uuid, $4::text, $5::jsonb, $6::jsonb RETURNING created_at`;
const ONE_STATEMENT = `${UPSERT}, event AS (
      INSERT INTO event_log (xid, seq, id, org_id, client_id, type, data, metadata)
      SELECT pg_current_xact_id(), nextval('event_seq'), $12, $2::uuid, $3::uuid, 'contact.created', $13::jsonb, '{}'::jsonb
      WHERE EXISTS (SELECT 1 FROM email) RETURNING created_at
    ) ${UPSERT_SELECT}, (SELECT created_at FROM event) AS event_created_at`;

function cpuOf(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * 10; // ms at 100 Hz
}

function processesOf(
  port: string,
  ceilingPort = '',
): { api: number[]; worker: number[]; postgres: number[]; ceiling: number[] } {
  const result = {
    api: [] as number[],
    worker: [] as number[],
    postgres: [] as number[],
    ceiling: [] as number[],
  };
  let postmaster = 0;
  const all = fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  for (const entry of all) {
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmdline.some((arg) => arg.endsWith('postgres')) && cmdline.includes(port))
        postmaster = Number(entry);
    } catch {}
  }
  for (const entry of all) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      const parent = Number(stat[1]);
      if (parent === postmaster || Number(entry) === postmaster) result.postgres.push(Number(entry));
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const env = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (!env.includes(`DATABASE_URL=`) || !env.includes(`:${port}/`)) continue;
      if (cmdline.includes('main.js\0api')) result.api.push(Number(entry));
      if (cmdline.includes('main.js\0worker')) result.worker.push(Number(entry));
      if (cmdline.includes('ceiling.js') && env.includes(`PORT=${ceilingPort}\0`))
        result.ceiling.push(Number(entry));
    } catch {}
  }
  return result;
}

export default async function writePathProfile(ctx: BenchContext): Promise<Section> {
  const { orgId, headers } = await ctx.tenant();
  const { org } = await ctx.admin('GET', `/orgs/${orgId}`);
  const clientId: string = org.house_client_id;
  const notes: string[] = [];
  const port = new URL(ctx.databaseUrl).port;
  const pool = new pg.Pool({ connectionString: ctx.databaseUrl, max: 20 });
  const run = randomUUID().slice(0, 8);
  const body = (n: number) => JSON.stringify({ email: `raw-${run}-${n}@x.example`, first_name: 'New' });
  const params = (n: number, tag: string) => {
    const at = new Date();
    return [
      v7(),
      orgId,
      clientId,
      `${tag}-${run}-${n}@raw.example`,
      null,
      `New Contact ${n}`,
      'New',
      `Contact ${n}`,
      at,
      v7(),
      v7(),
    ];
  };
  const measurements: Measurement[] = [];
  process.stdout.write('profiling\n');
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS bench_ceiling (
      id uuid PRIMARY KEY, org_id uuid NOT NULL, name text, email text, created_at timestamptz NOT NULL DEFAULT now())`);
    const ceilingInsert = (on: pg.Pool | pg.PoolClient = pool) => {
      const id = v7();
      return on.query({
        name: 'ceiling_insert',
        text: 'INSERT INTO bench_ceiling (id, org_id, name, email) VALUES ($1, $2, $3, $4) RETURNING id, created_at',
        values: [id, orgId, 'name', `${id}@example.com`],
      });
    };
    if (!process.env.HTTP_ONLY) {
      measurements.push(
        await loop(pool, 'raw: ceiling INSERT (autocommit)', async () => void (await ceilingInsert())),
      );
      measurements.push(
        await loop(pool, 'raw: BEGIN; INSERT; COMMIT (ceiling row)', async () => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await ceilingInsert(client);
            await client.query('COMMIT');
          } finally {
            client.release();
          }
        }),
      );
      const transactional = (eventNamed: boolean) => async (n: number) => {
        const client = await pool.connect();
        try {
          await client.query('begin');
          const values = params(n, eventNamed ? 'tn' : 'tu');
          await client.query({ name: 'wp_upsert', text: UPSERT + UPSERT_SELECT, values });
          const eventValues = [`evt_${v7()}`, orgId, clientId, 'contact.created', body(n), '{}'];
          await client.query(
            eventNamed
              ? { name: 'wp_event', text: EVENT, values: eventValues }
              : { text: EVENT, values: eventValues },
          );
          await client.query('commit');
        } finally {
          client.release();
        }
      };
      measurements.push(
        await loop(pool, 'raw: today (BEGIN; upsert; event unnamed; COMMIT)', transactional(false)),
      );
      measurements.push(await loop(pool, 'raw: today, event named', transactional(true)));
      const single = (tag: string) => async (n: number) => {
        await pool.query({
          name: 'wp_single',
          text: ONE_STATEMENT,
          values: [...params(n, tag), `evt_${v7()}`, body(n)],
        });
      };
      measurements.push(
        await loop(pool, 'raw: one statement (contact, email, event), autocommit', single('s1')),
      );
      measurements.push(
        await loop(pool, 'raw: BEGIN; one statement; COMMIT', async (n) => {
          const client = await pool.connect();
          try {
            await client.query('begin');
            await client.query({
              name: 'wp_single',
              text: ONE_STATEMENT,
              values: [...params(n, 'ts'), `evt_${v7()}`, body(n)],
            });
            await client.query('commit');
          } finally {
            client.release();
          }
        }),
      );
    }
    // Through HTTP, interleaved so that both see the same background load: requests per second and
    // the CPU each request costs the serving process, the worker (outbox relay) and PostgreSQL.
    const processes = processesOf(port);
    const ceilingPids = processesOf(port, new URL(ctx.ceilingUrl).port).ceiling;
    let sequence = 0;
    const post = (variant: 'no key' | 'Idempotency-Key') => ({
      url: `${ctx.apiUrl}/v1/crm/contacts`,
      method: 'POST' as const,
      headers,
      durationSeconds: 5,
      requests: [
        {
          method: 'POST' as const,
          path: '/v1/crm/contacts',
          setupRequest: (request: autocannon.Request) => {
            sequence += 1;
            return {
              ...request,
              headers:
                variant === 'no key'
                  ? request.headers
                  : { ...request.headers, 'idempotency-key': `${run}-${sequence}` },
              body: JSON.stringify({
                email: `http-${run}-${sequence}@x.example`,
                first_name: 'New',
                last_name: `Contact ${sequence}`,
              }),
            };
          },
        },
      ],
    });
    const ratios: string[] = [];
    for (let round = 1; round <= Number(process.env.ROUNDS ?? 3); round++) {
      const sample = async (
        name: string,
        server: number[],
        options: Parameters<BenchContext['measure']>[1],
      ) => {
        const before = {
          server: cpuOf(server),
          worker: cpuOf(processes.worker),
          pg: cpuOf(processesOf(port).postgres),
        };
        const m = await ctx.measure(name, options);
        const n = Math.max(1, m.requestsPerSecond * (options.durationSeconds ?? 8));
        const per = (ms: number) => Math.round((ms * 1000) / n);
        const cpu = {
          server: per(cpuOf(server) - before.server),
          worker: per(cpuOf(processes.worker) - before.worker),
          pg: per(cpuOf(processesOf(port).postgres) - before.pg),
        };
        notes.push(
          `round ${round}, ${name}: ${m.requestsPerSecond}/s, CPU µs per request: server ${cpu.server}, worker ${cpu.worker}, postgres ${cpu.pg}`,
        );
        process.stdout.write(`${notes[notes.length - 1]}\n`);
        measurements.push(m);
        return m;
      };
      const ceiling = await sample(`HTTP INSERT ceiling (round ${round})`, ceilingPids, {
        url: `${ctx.ceilingUrl}/insert`,
        method: 'POST',
        body: '{}',
        durationSeconds: 5,
      });
      const create = await sample(
        `HTTP POST /v1/crm/contacts (round ${round})`,
        processes.api,
        post('no key'),
      );
      // The same with the worker paused: what the outbox relay's share of the machine costs the create.
      for (const pid of processes.worker) process.kill(pid, 'SIGSTOP');
      try {
        await sample(
          `HTTP POST /v1/crm/contacts, relay paused (round ${round})`,
          processes.api,
          post('no key'),
        );
      } finally {
        for (const pid of processes.worker) process.kill(pid, 'SIGCONT');
      }
      ratios.push((create.requestsPerSecond / ceiling.requestsPerSecond).toFixed(2));
      if (process.env.WITH_KEY)
        await sample(
          `HTTP POST with Idempotency-Key (round ${round})`,
          processes.api,
          post('Idempotency-Key'),
        );
    }
    notes.push(`ratios: ${ratios.join(', ')}`);
    for (const note of notes) process.stdout.write(`${note}\n`);
  } finally {
    await pool.end();
  }
  return { title: 'Write path profile', measurements, targets: [], notes };
}
