import { type Generated, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { SubjectType } from './source.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    gists: GistsTable;
  }
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
  claimed_until: Date | null;
  created_at: Generated<Date>;
  generated_at: Date | null;
}

export type GistRow = Selectable<GistsTable>;

export interface Subject {
  type: SubjectType;
  id: string;
}

/** The cache read, run on every gist request: one prepared statement on the partial index `gists_cache`. */
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
 * Inserts the subject's generation claim, or returns undefined when the subject already has one in
 * flight (the partial unique index `gists_in_flight`): the single flight.
 */
export async function insertClaim(
  trx: Trx,
  tenant: TenantScope,
  claim: { id: string; subject: Subject; hash: string; generator: string; fuelCost: number; leaseMs: number },
): Promise<GistRow | undefined> {
  const { rows } = await sql<GistRow>`
    INSERT INTO gists (id, org_id, client_id, subject_type, subject_id, source_hash, generator, status,
                       fuel_cost, claimed_until)
    VALUES (${claim.id}, ${tenant.orgId}, ${tenant.clientId}, ${claim.subject.type}, ${claim.subject.id},
            ${claim.hash}, ${claim.generator}, 'generating', ${claim.fuelCost},
            now() + make_interval(secs => ${claim.leaseMs / 1000}))
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
    .select(sql<boolean>`claimed_until < now()`.as('expired'))
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('subject_type', '=', subject.type)
    .where('subject_id', '=', subject.id)
    .where('status', '=', 'generating')
    .executeTakeFirst();
}

export function findGist(db: Executor, tenant: TenantScope, id: string): Promise<GistRow | undefined> {
  return db
    .selectFrom('gists')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Turns the claim into the ready gist; undefined when the claim is gone (given up after its lease). */
export function completeClaim(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  gist: { summary: string; highlights: string[]; model: string },
): Promise<GistRow | undefined> {
  return trx
    .updateTable('gists')
    .set({
      status: 'ready',
      summary: gist.summary,
      highlights: JSON.stringify(gist.highlights) as unknown as string[],
      model: gist.model,
      claimed_until: null,
      generated_at: sql<Date>`now()`,
    })
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .where('status', '=', 'generating')
    .returningAll()
    .executeTakeFirst();
}

/** Removes a claim still generating; false when it is gone already (completed or removed by another). */
export async function deleteClaim(
  trx: Trx,
  tenant: TenantScope,
  id: string,
  onlyExpired: boolean,
): Promise<boolean> {
  let query = trx
    .deleteFrom('gists')
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .where('status', '=', 'generating');
  if (onlyExpired) query = query.where('claimed_until', '<', sql<Date>`now()`);
  const result = await query.executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Claims whose lease is over, of every tenant: generations whose process died mid-way. */
export function findExpiredClaims(db: Executor, limit: number) {
  return db
    .selectFrom('gists')
    .select(['id', 'org_id', 'client_id'])
    .where('status', '=', 'generating')
    .where('claimed_until', '<', sql<Date>`now()`)
    .limit(limit)
    .execute();
}
