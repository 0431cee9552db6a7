import { type Generated, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import { whereOwned, whereTenant } from '../../platform/db/tenant-rows.ts';
import { recentActivitiesGistJson } from '../activities/service.ts';
import { companyGistJson } from '../companies/service.ts';
import { companyContactsGistJson, contactCompanyId, contactGistJson } from '../contacts/service.ts';
import { dealGistJson, dealLink, openDealsGistJson } from '../deals/service.ts';
import { openTasksGistJson } from '../tasks/service.ts';

export type SubjectType = 'contact' | 'company' | 'deal';

declare module '../../platform/db/schema.ts' {
  interface Database {
    gists: GistsTable;
    gist_versions: GistVersionsTable;
  }
}

/** A subject's source version: bumped by every write to a row its gist reads (migration 1050's triggers). */
export interface GistVersionsTable {
  org_id: string;
  client_id: string;
  subject_type: SubjectType;
  subject_id: string;
  /** A bigint, as text. */
  version: Generated<string>;
  created_xmax: string | null;
}

export interface GistsTable {
  id: string;
  org_id: string;
  client_id: string;
  subject_type: SubjectType;
  subject_id: string;
  source_hash: string;
  generator: string;
  status: 'generating' | 'ready';
  summary: string | null;
  highlights: string[] | null;
  model: string | null;
  fuel_cost: number;
  /** The source version (a bigint, as text) the gist is known to be written from; null when not known. */
  source_version: string | null;
  /** A generation's lease (platform/jobs/leased.ts): the claiming request's, or a sweep's giving it up. */
  lease_id: string | null;
  lease_until: Date | null;
  attempts: Generated<number>;
  created_at: Generated<Date>;
  generated_at: Date | null;
}

export type GistRow = Selectable<GistsTable>;

export interface Subject {
  type: SubjectType;
  id: string;
}

/** How much history a gist reads: the newest activities, the open deals and tasks, a company's people. */
const RECENT_ACTIVITIES = 5;
const OPEN_ITEMS = 10;
const PEOPLE = 5;

interface SourceParams {
  orgId: string;
  clientId: string;
  id: string;
  generator: string;
}

/**
 * What a gist of each kind of record is written from, as one jsonb document assembled from the SQL
 * pieces the owning modules export (contacts, companies, deals, pipelines, activities, tasks): null when
 * the record is not the tenant's. Its keys are the `GistSource` type's.
 */
const SOURCES: Record<SubjectType, (p: SourceParams) => ReturnType<typeof sql>> = {
  contact: (
    p,
  ) => sql`CASE WHEN ${contactGistJson(p.orgId, p.clientId, p.id)} IS NULL THEN NULL ELSE jsonb_build_object(
      'subject_type', 'contact',
      'contact', ${contactGistJson(p.orgId, p.clientId, p.id)},
      'company', ${companyGistJson(p.orgId, p.clientId, contactCompanyId(p.orgId, p.clientId, p.id))},
      'open_deals', ${openDealsGistJson(p.orgId, p.clientId, 'primary_contact_id', p.id, OPEN_ITEMS)},
      'recent_activities', ${recentActivitiesGistJson(p.orgId, p.clientId, 'contact_id', p.id, RECENT_ACTIVITIES)},
      'open_tasks', ${openTasksGistJson(p.orgId, p.clientId, 'contact_id', p.id, OPEN_ITEMS)}) END`,
  company: (
    p,
  ) => sql`CASE WHEN ${companyGistJson(p.orgId, p.clientId, p.id)} IS NULL THEN NULL ELSE jsonb_build_object(
      'subject_type', 'company',
      'company', ${companyGistJson(p.orgId, p.clientId, p.id)},
      'contacts', ${companyContactsGistJson(p.orgId, p.clientId, p.id, PEOPLE)},
      'open_deals', ${openDealsGistJson(p.orgId, p.clientId, 'company_id', p.id, OPEN_ITEMS)},
      'recent_activities', ${recentActivitiesGistJson(p.orgId, p.clientId, 'company_id', p.id, RECENT_ACTIVITIES)},
      'open_tasks', ${openTasksGistJson(p.orgId, p.clientId, 'company_id', p.id, OPEN_ITEMS)}) END`,
  deal: (
    p,
  ) => sql`CASE WHEN ${dealGistJson(p.orgId, p.clientId, p.id)} IS NULL THEN NULL ELSE jsonb_build_object(
      'subject_type', 'deal',
      'deal', ${dealGistJson(p.orgId, p.clientId, p.id)},
      'company', ${companyGistJson(p.orgId, p.clientId, dealLink(p.orgId, p.clientId, p.id, 'company_id'))},
      'primary_contact', ${contactGistJson(p.orgId, p.clientId, dealLink(p.orgId, p.clientId, p.id, 'primary_contact_id'))},
      'recent_activities', ${recentActivitiesGistJson(p.orgId, p.clientId, 'deal_id', p.id, RECENT_ACTIVITIES)},
      'open_tasks', ${openTasksGistJson(p.orgId, p.clientId, 'deal_id', p.id, OPEN_ITEMS)}) END`,
};

/**
 * Whether this statement's snapshot may stamp a gist with the version it read (SQL, over the version
 * row `v`). A writer bumps only the version rows that exist when its trigger runs, so one whose
 * trigger ran before the row was committed, and which commits after the source was read, changed the
 * source without bumping it. Such a writer had its xid before the row was committed, so below
 * `created_xmax` (the xmax of a snapshot taken after that commit); when the snapshot's xmin is at or
 * above it, every such writer had ended when the source was read, and its write is in it. Every later
 * writer sees the row and bumps it past the version read.
 */
const SAFE_SNAPSHOT = sql<boolean>`(v.created_xmax IS NOT NULL AND pg_snapshot_xmin(pg_current_snapshot()) >= v.created_xmax)`;

/**
 * The hit path of every gist request, by key: the subject's version row and the ready gist of that
 * version and writer. No row when nobody asked a gist of the subject since versions exist. The gist
 * must be the newest of its hash, the one the hash path would serve (a forced generation of the same
 * source may be newer and not stamped yet).
 */
const versionedGistStatement = prepare(
  (_db, p: { orgId: string; clientId: string; type: SubjectType; id: string; generator: string }) =>
    sql<{ hit: GistSourceRow['hit'] }>`SELECT (SELECT to_jsonb(g) FROM gists g
        WHERE g.org_id = v.org_id AND g.client_id = v.client_id AND g.subject_type = v.subject_type
          AND g.subject_id = v.subject_id AND g.source_version = v.version AND g.generator = ${p.generator}
          AND g.status = 'ready'
          AND NOT EXISTS (SELECT 1 FROM gists n
            WHERE n.org_id = g.org_id AND n.client_id = g.client_id AND n.subject_type = g.subject_type
              AND n.subject_id = g.subject_id AND n.source_hash = g.source_hash AND n.generator = g.generator
              AND n.status = 'ready' AND n.generated_at > g.generated_at)
        ORDER BY g.generated_at DESC LIMIT 1) AS hit
      FROM gist_versions v
      WHERE v.org_id = ${p.orgId} AND v.client_id = ${p.clientId} AND v.subject_type = ${p.type}
        AND v.subject_id = ${p.id}`,
);

/** The subject's gist of its current source version, if any; `versioned` false when it has no version yet. */
export async function findVersionedGist(
  db: Executor,
  tenant: TenantScope,
  subject: Subject,
  generator: string,
): Promise<{ versioned: boolean; hit: GistRow | undefined }> {
  const [row] = await versionedGistStatement.run(db, {
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    type: subject.type,
    id: subject.id,
    generator,
  });
  return { versioned: row !== undefined, hit: row?.hit ? fromJson(row.hit) : undefined };
}

const SUBJECT_TABLES = { contact: 'contacts', company: 'companies', deal: 'deals' } as const;

/**
 * Gives the subject (if it is the tenant's) a version row, on the pool: two statements, each committed
 * on its own, before the source is read. `created_xmax` is taken by the second, whose snapshot is
 * after the row's commit; the first's own snapshot is not (a writer may take its xid after it and
 * still run its trigger before the row is committed).
 */
export async function startSourceVersion(db: Db, tenant: TenantScope, subject: Subject): Promise<void> {
  await sql`INSERT INTO gist_versions (org_id, client_id, subject_type, subject_id)
    SELECT ${tenant.orgId}, ${tenant.clientId}, ${subject.type}, ${subject.id}
    WHERE EXISTS (SELECT 1 FROM ${sql.table(SUBJECT_TABLES[subject.type])} r
                  WHERE r.org_id = ${tenant.orgId} AND r.client_id = ${tenant.clientId} AND r.id = ${subject.id})
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`UPDATE gist_versions SET created_xmax = pg_snapshot_xmax(pg_current_snapshot())
    WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND subject_type = ${subject.type}
      AND subject_id = ${subject.id} AND created_xmax IS NULL`.execute(db);
}

/**
 * The hash path, one prepared statement per kind of record: the record's source, its sha256 (over
 * jsonb's text, whose key order is fixed), the newest ready gist of that hash and writer if any, and
 * the source version read in the same snapshot (`stamp`, when the snapshot is safe). A gist found
 * here is re-stamped with that version (never with an older one), so the next request finds it by key.
 */
const sourceStatements = Object.fromEntries(
  (Object.keys(SOURCES) as SubjectType[]).map((type) => [
    type,
    prepare(
      (_db, p: SourceParams) =>
        sql<GistSourceRow>`WITH s AS (
          SELECT x.source, encode(sha256(convert_to(x.source::text, 'UTF8')), 'hex') AS hash
          FROM (SELECT ${SOURCES[type](p)} AS source) x
        ), cached AS (
          SELECT g.* FROM s, gists g
          WHERE g.org_id = ${p.orgId} AND g.client_id = ${p.clientId} AND g.subject_type = ${sql.lit(type)}
            AND g.subject_id = ${p.id} AND g.source_hash = s.hash AND g.generator = ${p.generator}
            AND g.status = 'ready'
          ORDER BY g.generated_at DESC LIMIT 1
        ), stamp AS (
          SELECT v.version FROM gist_versions v
          WHERE v.org_id = ${p.orgId} AND v.client_id = ${p.clientId} AND v.subject_type = ${sql.lit(type)}
            AND v.subject_id = ${p.id} AND ${SAFE_SNAPSHOT}
        ), restamp AS (
          UPDATE gists r SET source_version = stamp.version FROM cached, stamp
          WHERE r.org_id = cached.org_id AND r.id = cached.id
            AND (r.source_version IS NULL OR r.source_version < stamp.version)
        )
        SELECT s.source, s.hash, (SELECT to_jsonb(cached) FROM cached) AS hit,
          (SELECT stamp.version::text FROM stamp) AS stamp
        FROM s`,
    ),
  ]),
) as Record<SubjectType, ReturnType<typeof prepare<SourceParams, GistSourceRow>>>;

interface GistSourceRow {
  source: unknown;
  hash: string | null;
  /** The cached gist as jsonb (timestamps as text), or null. */
  hit: GistJson | null;
  stamp: string | null;
}

type GistJson = Omit<GistRow, 'generated_at' | 'created_at' | 'source_version'> & {
  generated_at: string;
  created_at: string;
  source_version: number | null;
};

function fromJson(hit: GistJson): GistRow {
  return {
    ...hit,
    source_version: hit.source_version === null ? null : String(hit.source_version),
    generated_at: new Date(hit.generated_at),
    created_at: new Date(hit.created_at),
  };
}

/**
 * The record's gist source, its hash, the cached gist of that hash, and the source version a gist
 * written from it may be stamped with (null when not known); undefined when the record is absent.
 */
export async function readSource(
  db: Executor,
  tenant: TenantScope,
  subject: Subject,
  generator: string,
): Promise<{ source: unknown; hash: string; hit: GistRow | undefined; stamp: string | null } | undefined> {
  const [row] = await sourceStatements[subject.type].run(db, {
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    id: subject.id,
    generator,
  });
  if (!row?.source || !row.hash) return undefined;
  return {
    source: row.source,
    hash: row.hash,
    hit: row.hit ? fromJson(row.hit) : undefined,
    stamp: row.stamp,
  };
}

/** The cache read by hash of a later round (after a generation failed or ended): one prepared statement on `gists_cache`. */
const readyGist = prepare(
  (
    db,
    p: { orgId: string; clientId: string; type: SubjectType; id: string; hash: string; generator: string },
  ) =>
    db
      .selectFrom('gists')
      .selectAll()
      .where('org_id', '=', p.orgId)
      .where('client_id', '=', p.clientId)
      .where('subject_type', '=', p.type)
      .where('subject_id', '=', p.id)
      .where('source_hash', '=', p.hash)
      .where('generator', '=', p.generator)
      .where('status', '=', 'ready')
      .orderBy('generated_at', 'desc')
      .limit(1),
);

export async function findReadyGist(
  db: Executor,
  tenant: TenantScope,
  subject: Subject,
  hash: string,
  generator: string,
): Promise<GistRow | undefined> {
  const [row] = await readyGist.run(db, {
    orgId: tenant.orgId,
    clientId: tenant.clientId,
    type: subject.type,
    id: subject.id,
    hash,
    generator,
  });
  return row;
}

/**
 * Waits for any other claim or completion of the subject in flight, until this transaction ends: the
 * claiming statement that follows sees what they committed (READ COMMITTED takes its snapshot per statement).
 */
export async function lockSubject(trx: Trx, tenant: TenantScope, subject: Subject): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`gist:${tenant.orgId}:${subject.type}:${subject.id}`}, 0))`.execute(
    trx,
  );
}

/**
 * Inserts the subject's generation claim, or returns undefined when the subject already has one in
 * flight (the partial unique index `gists_in_flight`) or, with `unlessReady`, when a ready gist of the
 * same source and generator exists (checked in this statement): the single flight. Run after `lockSubject`.
 */
export async function insertClaim(
  trx: Trx,
  tenant: TenantScope,
  claim: {
    id: string;
    leaseId: string;
    subject: Subject;
    hash: string;
    /** The source version the hash was read at, when known (see `readSource`). */
    sourceVersion: string | null;
    generator: string;
    fuelCost: number;
    leaseMs: number;
    unlessReady: boolean;
  },
): Promise<GistRow | undefined> {
  const { rows } = await sql<GistRow>`
    INSERT INTO gists (id, org_id, client_id, subject_type, subject_id, source_hash, source_version, generator,
                       status, fuel_cost, lease_id, lease_until)
    SELECT ${claim.id}, ${tenant.orgId}, ${tenant.clientId}, ${claim.subject.type}, ${claim.subject.id},
           ${claim.hash}, ${claim.sourceVersion}::bigint, ${claim.generator}, 'generating', ${claim.fuelCost},
           ${claim.leaseId}::uuid,
           now() + ${claim.leaseMs}::float8 * interval '1 millisecond'
    WHERE NOT ${claim.unlessReady} OR NOT EXISTS (
      SELECT 1 FROM gists g
      WHERE g.org_id = ${tenant.orgId} AND g.client_id = ${tenant.clientId}
        AND g.subject_type = ${claim.subject.type} AND g.subject_id = ${claim.subject.id}
        AND g.source_hash = ${claim.hash} AND g.generator = ${claim.generator} AND g.status = 'ready')
    ON CONFLICT (org_id, client_id, subject_type, subject_id) WHERE status = 'generating' DO NOTHING
    RETURNING *`.execute(trx);
  return rows[0];
}

/** The subject's generation in flight, if any, and whether its claim is over. */
export async function findClaim(
  db: Executor,
  tenant: TenantScope,
  subject: Subject,
): Promise<(GistRow & { expired: boolean }) | undefined> {
  return db
    .selectFrom('gists')
    .selectAll()
    .select(sql<boolean>`lease_until <= now()`.as('expired'))
    .$call(whereTenant(tenant))
    .where('subject_type', '=', subject.type)
    .where('subject_id', '=', subject.id)
    .where('status', '=', 'generating')
    .executeTakeFirst();
}

export function findGist(db: Executor, tenant: TenantScope, id: string): Promise<GistRow | undefined> {
  return db.selectFrom('gists').selectAll().$call(whereOwned(tenant, id)).executeTakeFirst();
}

/**
 * Turns the claim into the ready gist, in a transaction that holds the subject's lock and has found the
 * claim's lease still held (so a claim being taken meanwhile sees either the claim or the ready gist).
 */
export async function completeClaim(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  gist: { summary: string; highlights: string[]; model: string },
): Promise<GistRow> {
  return trx
    .updateTable('gists')
    .set({
      status: 'ready',
      summary: gist.summary,
      highlights: JSON.stringify(gist.highlights) as unknown as string[],
      model: gist.model,
      lease_id: null,
      lease_until: null,
      generated_at: sql<Date>`now()`,
    })
    .$call(whereOwned(tenant, id))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes a claim still generating, in a transaction that holds its lease. */
export async function deleteClaim(trx: Trx, tenant: TenantScope, id: string): Promise<void> {
  await trx.deleteFrom('gists').$call(whereOwned(tenant, id)).where('status', '=', 'generating').execute();
}

/** Generations in flight, as leased work: one whose lease ran out (its process died) is given up. */
export const generationsInFlight = { table: 'gists', due: sql`t.status = 'generating'` };

/** The one generation in flight `id` of the tenant, as leased work (a waiting request gives it up). */
export function generationInFlight(tenant: TenantScope, id: string) {
  return {
    table: 'gists',
    due: sql`t.org_id = ${tenant.orgId}::uuid AND t.client_id = ${tenant.clientId}::uuid AND t.id = ${id}::uuid
      AND t.status = 'generating'`,
  };
}
