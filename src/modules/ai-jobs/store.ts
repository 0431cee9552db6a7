import { type Generated, type Selectable, sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { recentActivitiesGistJson } from '../activities/service.ts';
import { companyGistJson } from '../companies/service.ts';
import { companyContactsGistJson, contactCompanyId, contactGistJson } from '../contacts/service.ts';
import { openDealsGistJson, wonDealsCount } from '../deals/service.ts';
import { openTasksGistJson } from '../tasks/service.ts';

export type AiJobKind = 'precall_brief' | 'lead_enrichment';
export type AiJobStatus = 'pending' | 'running' | 'completed' | 'failed';
export type AiJobSubjectType = 'contact' | 'company';

declare module '../../platform/db/schema.ts' {
  interface Database {
    ai_jobs: AiJobsTable;
  }
}

export interface AiJobsTable {
  org_id: string;
  id: string;
  client_id: string;
  kind: AiJobKind;
  status: Generated<AiJobStatus>;
  subject_type: AiJobSubjectType;
  subject_id: string;
  input: Generated<AiJobInput>;
  result: unknown;
  error_code: string | null;
  error_message: string | null;
  fuel_cost: number;
  metadata: Generated<Record<string, unknown>>;
  lease_id: string | null;
  lease_until: Generated<Date | null>;
  attempts: Generated<number>;
  created_at: Generated<Date>;
  completed_at: Date | null;
}

/** What was asked: a brief's purpose, an enrichment's `apply`. */
export interface AiJobInput {
  purpose?: string | null;
  apply?: boolean;
}

export type AiJobRow = Selectable<AiJobsTable>;

export interface NewAiJob {
  id: string;
  kind: AiJobKind;
  subjectType: AiJobSubjectType;
  subjectId: string;
  input: AiJobInput;
  fuelCost: number;
  metadata: Record<string, unknown>;
}

export function insertJob(trx: Trx, tenant: TenantScope, job: NewAiJob): Promise<AiJobRow> {
  return trx
    .insertInto('ai_jobs')
    .values({
      org_id: tenant.orgId,
      id: job.id,
      client_id: tenant.clientId,
      kind: job.kind,
      subject_type: job.subjectType,
      subject_id: job.subjectId,
      input: JSON.stringify(job.input) as unknown as AiJobInput,
      result: null,
      error_code: null,
      error_message: null,
      fuel_cost: job.fuelCost,
      metadata: JSON.stringify(job.metadata) as unknown as Record<string, unknown>,
      lease_id: null,
      completed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findJob(db: Executor, tenant: TenantScope, id: string): Promise<AiJobRow | undefined> {
  return db
    .selectFrom('ai_jobs')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface AiJobFilter {
  kind?: AiJobKind;
  status?: AiJobStatus;
  subject_id?: string;
}

/** `GET /ai/jobs`, newest first. */
export function listJobs(db: Executor, tenant: TenantScope, filter: AiJobFilter, page: PageRequest<string>) {
  let query = db
    .selectFrom('ai_jobs')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.subject_id) query = query.where('subject_id', '=', filter.subject_id);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Ends a job held by its lease as completed with its result, or failed with its error. */
export function finishJob(
  trx: Trx,
  job: Pick<AiJobRow, 'org_id' | 'id'>,
  end:
    | { status: 'completed'; result: unknown }
    | { status: 'failed'; errorCode: string; errorMessage: string },
): Promise<AiJobRow> {
  return trx
    .updateTable('ai_jobs')
    .set({
      status: end.status,
      result: end.status === 'completed' ? JSON.stringify(end.result) : null,
      error_code: end.status === 'failed' ? end.errorCode : null,
      error_message: end.status === 'failed' ? end.errorMessage : null,
      completed_at: sql<Date>`now()`,
    })
    .where('org_id', '=', job.org_id)
    .where('id', '=', job.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** How much history a brief and an enrichment read. */
const BRIEF_ACTIVITIES = 10;
const ENRICH_ACTIVITIES = 20;
const OPEN_ITEMS = 10;
const PEOPLE = 5;

/** The contact's brief source (the `BriefSource` type's keys but `purpose`), null when not the tenant's. */
export async function readBriefSource(
  db: Executor,
  tenant: TenantScope,
  contactId: string,
): Promise<unknown> {
  const { orgId, clientId } = tenant;
  const { rows } = await sql<{
    source: unknown;
  }>`SELECT CASE WHEN c.contact IS NULL THEN NULL ELSE jsonb_build_object(
      'subject_type', 'contact',
      'contact', c.contact,
      'company', ${companyGistJson(orgId, clientId, contactCompanyId(orgId, clientId, contactId))},
      'open_deals', ${openDealsGistJson(orgId, clientId, 'primary_contact_id', contactId, OPEN_ITEMS)},
      'recent_activities', ${recentActivitiesGistJson(orgId, clientId, 'contact_id', contactId, BRIEF_ACTIVITIES)},
      'open_tasks', ${openTasksGistJson(orgId, clientId, 'contact_id', contactId, OPEN_ITEMS)}) END AS source
    FROM (SELECT ${contactGistJson(orgId, clientId, contactId)} AS contact) c`.execute(db);
  return rows[0]?.source ?? null;
}

/** What an enrichment of the record reads (the `EnrichmentSource` type's keys but `empty_fields`). */
export async function readEnrichmentSource(
  db: Executor,
  tenant: TenantScope,
  subject: { type: AiJobSubjectType; id: string },
): Promise<unknown> {
  const { orgId, clientId } = tenant;
  const { id } = subject;
  const statement =
    subject.type === 'contact'
      ? sql<{ source: unknown }>`SELECT CASE WHEN r.record IS NULL THEN NULL ELSE jsonb_build_object(
          'subject_type', 'contact',
          'contact', r.record,
          'company', ${companyGistJson(orgId, clientId, contactCompanyId(orgId, clientId, id))},
          'open_deals', ${openDealsGistJson(orgId, clientId, 'primary_contact_id', id, OPEN_ITEMS)},
          'won_deals', ${wonDealsCount(orgId, clientId, id)},
          'recent_activities', ${recentActivitiesGistJson(orgId, clientId, 'contact_id', id, ENRICH_ACTIVITIES)}) END AS source
        FROM (SELECT ${contactGistJson(orgId, clientId, id)} AS record) r`
      : sql<{ source: unknown }>`SELECT CASE WHEN r.record IS NULL THEN NULL ELSE jsonb_build_object(
          'subject_type', 'company',
          'company', r.record,
          'contacts', ${companyContactsGistJson(orgId, clientId, id, PEOPLE)},
          'recent_activities', ${recentActivitiesGistJson(orgId, clientId, 'company_id', id, ENRICH_ACTIVITIES)}) END AS source
        FROM (SELECT ${companyGistJson(orgId, clientId, id)} AS record) r`;
  const { rows } = await statement.execute(db);
  return rows[0]?.source ?? null;
}
