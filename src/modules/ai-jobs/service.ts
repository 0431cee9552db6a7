import { sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { ApiError, errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import type { EnrichmentProposal } from '../../providers/llm/index.ts';
import { COMPANY } from '../companies/service.ts';
import { CONTACT } from '../contacts/service.ts';
import { debitFuel } from '../fuel/service.ts';
import {
  type AiJobFilter,
  type AiJobInput,
  type AiJobKind,
  type AiJobRow,
  type AiJobStatus,
  type AiJobSubjectType,
  findJob,
  insertJob,
  listJobs,
} from './store.ts';

/**
 * AI jobs: a pre-call brief of a contact, or an enrichment of a contact or company, asked for over the
 * API (202) and written by the LLM provider in a worker loop (`run.ts`). Accepting a job debits its
 * FUEL in the same transaction, the job's id being the debit's cause: 402 `fuel_exhausted` creates
 * nothing. A job that fails is refunded once, under the same cause.
 */

export type { AiJobKind, AiJobRow, AiJobStatus, AiJobSubjectType } from './store.ts';

/** A brief's result, or an enrichment's. */
export type AiJobResult =
  | { brief: string; talking_points: string[] }
  | { proposals: EnrichmentProposal[]; applied: string[] };

/** The job as the API and the events show it. */
export interface AiJob {
  id: string;
  kind: AiJobKind;
  status: AiJobStatus;
  subject_type: AiJobSubjectType;
  subject_id: string;
  result: AiJobResult | null;
  error_code: string | null;
  fuel_cost: number;
  metadata: Record<string, unknown>;
  created_at: Date;
  completed_at: Date | null;
}

export function toJob(row: AiJobRow): AiJob {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    subject_type: row.subject_type,
    subject_id: row.subject_id,
    result: (row.result as AiJobResult | null) ?? null,
    error_code: row.error_code,
    fuel_cost: row.fuel_cost,
    metadata: row.metadata,
    created_at: row.created_at,
    completed_at: row.completed_at,
  };
}

export interface JobRequest {
  kind: AiJobKind;
  subject: { type: AiJobSubjectType; id: string };
  input: AiJobInput;
  metadata: Record<string, unknown>;
}

const NOUNS = { contact: 'Contact', company: 'Company' } as const;

/**
 * Accepts a job: the subject must be the tenant's (404 otherwise), its FUEL is debited last (402
 * `fuel_exhausted` rolls the job back with it). The worker loop picks it up.
 */
export async function requestJob(
  trx: Trx,
  tenant: TenantScope,
  request: JobRequest,
  fuelCost: number,
): Promise<AiJob> {
  const kind = request.subject.type === 'contact' ? CONTACT : COMPANY;
  if (!(await kind.existing(trx, tenant, [request.subject.id])).length)
    throw errors.notFound(NOUNS[request.subject.type], request.subject.id);
  const row = await insertJob(trx, tenant, {
    id: newId(),
    kind: request.kind,
    subjectType: request.subject.type,
    subjectId: request.subject.id,
    input: request.input,
    fuelCost,
    metadata: request.metadata,
  });
  await debitFuel(trx, tenant, { ...fuelCauseOf(row.id), reason: 'ai_job', amount: fuelCost });
  return toJob(row);
}

export async function getJob(db: Executor, tenant: TenantScope, id: string): Promise<AiJob> {
  const row = await findJob(db, tenant, id);
  if (!row) throw errors.notFound('AI job', id);
  return toJob(row);
}

export async function searchJobs(
  db: Executor,
  tenant: TenantScope,
  filter: AiJobFilter,
  page: PageRequest<string>,
): Promise<AiJob[]> {
  return (await listJobs(db, tenant, filter, page)).map(toJob);
}

/** The FUEL cause of a job: its debit and its refund, each at most once. */
export function fuelCauseOf(jobId: string) {
  return { referenceType: 'ai_job', referenceId: jobId };
}

/**
 * Asks for a contact's pre-call brief on behalf of another module (the SDR dialer), in its
 * transaction; null, with nothing written, when the org has no FUEL for it (the caller goes on without).
 */
export async function requestPrecallBrief(
  trx: Trx,
  tenant: TenantScope,
  contactId: string,
  metadata: Record<string, unknown>,
  fuelCost: number,
): Promise<AiJob | null> {
  // The job is written before its debit refuses it: a savepoint undoes the job, not the caller's work.
  await sql`SAVEPOINT precall_brief`.execute(trx);
  try {
    const job = await requestJob(
      trx,
      tenant,
      {
        kind: 'precall_brief',
        subject: { type: 'contact', id: contactId },
        input: { purpose: null },
        metadata,
      },
      fuelCost,
    );
    await sql`RELEASE SAVEPOINT precall_brief`.execute(trx);
    return job;
  } catch (error) {
    if (!(error instanceof ApiError) || (error.code !== 'fuel_exhausted' && error.code !== 'not_found'))
      throw error;
    await sql`ROLLBACK TO SAVEPOINT precall_brief`.execute(trx);
    return null;
  }
}
