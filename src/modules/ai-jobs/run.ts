import { sql } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db, Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import type { Lease, LeasedWork } from '../../platform/jobs/leased.ts';
import {
  type BriefSource,
  type EnrichmentProposal,
  type EnrichmentSource,
  type LlmProvider,
  LlmUnavailableError,
} from '../../providers/llm/index.ts';
import { patchCompany } from '../companies/service.ts';
import { patchContact } from '../contacts/service.ts';
import { refundFuel } from '../fuel/service.ts';
import { fuelCauseOf, toJob } from './service.ts';
import { type AiJobRow, finishJob, readBriefSource, readEnrichmentSource } from './store.ts';

/**
 * The AI job loop, a leased loop (`src/platform/jobs/leased.ts`): a worker claims due jobs under a
 * lease, reads each job's source and calls the model outside any transaction, then ends the job in one
 * transaction fenced by its lease: the result (and, for an enrichment with `apply`, the writes into
 * empty fields), or the failure with its FUEL refunded, with the job's event. A worker killed mid-job
 * leaves it `running` until its lease is over; another worker then claims it again. A model that
 * cannot answer fails the job at once (`ai_unavailable`), as a gist request fails; any other error is
 * retried, and a job claimed `maxAttempts` times without finishing fails (`worker_lost`).
 */

export interface AiJobContext {
  db: Db;
  llm: LlmProvider;
  leaseMs: number;
  maxAttempts: number;
  pollMs: number;
}

const BATCH = 8;
const RETRY_MS = 1000;

const COMPLETED_EVENT = {
  precall_brief: 'ai.precall_brief.completed',
  lead_enrichment: 'ai.lead_enrichment.completed',
} as const;

export function aiJobWork(context: AiJobContext): LeasedWork<AiJobRow> {
  return {
    name: 'ai_jobs',
    intervalMs: context.pollMs,
    table: 'ai_jobs',
    due: sql`t.status IN ('pending', 'running')`,
    onClaim: sql`status = 'running'`,
    leaseMs: context.leaseMs,
    batch: BATCH,
    attempts: { max: context.maxAttempts, backoffMs: () => RETRY_MS },
    work: (lease) => runJob(context, lease),
    exhausted: (lease) =>
      fail(lease, 'worker_lost', `The job did not finish in ${context.maxAttempts} attempts.`),
  };
}

class JobFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function runJob(context: AiJobContext, lease: Lease<AiJobRow>): Promise<void> {
  const job = lease.row;
  const tenant = tenantOf(job);
  try {
    if (job.kind === 'precall_brief') {
      const source = await readBriefSource(context.db, tenant, job.subject_id);
      if (!source) throw subjectGone(job);
      const written = await context.llm.brief({
        ...(source as BriefSource),
        purpose: job.input.purpose ?? null,
      });
      await complete(lease, async () => ({ brief: written.brief, talking_points: written.talking_points }));
      return;
    }
    const read = await readEnrichmentSource(context.db, tenant, {
      type: job.subject_type,
      id: job.subject_id,
    });
    if (!read) throw subjectGone(job);
    const source = { ...(read as EnrichmentSource), empty_fields: emptyFields(read as EnrichmentSource) };
    const { proposals } = source.empty_fields.length
      ? await context.llm.proposeEnrichment(source as EnrichmentSource)
      : { proposals: [] };
    const wanted = proposals.filter((proposal) => source.empty_fields.includes(proposal.field as never));
    await complete(lease, async (trx) => ({
      proposals: wanted,
      applied: job.input.apply ? await applyProposals(trx, tenant, job, wanted) : [],
    }));
  } catch (error) {
    if (error instanceof JobFailure) return fail(lease, error.code, error.message);
    if (error instanceof LlmUnavailableError) return fail(lease, 'ai_unavailable', error.message);
    throw error;
  }
}

/** The job's result, its writes and its event, if this worker's lease still holds the job. */
async function complete(lease: Lease<AiJobRow>, work: (trx: Trx) => Promise<unknown>): Promise<void> {
  await lease.inTransaction(async (trx) => {
    const result = await work(trx);
    const done = await finishJob(trx, lease.row, { status: 'completed', result });
    await lease.complete(trx);
    await emit(trx, tenantOf(done), COMPLETED_EVENT[done.kind], { ...toJob(done) }, done.metadata);
  });
}

/** Fails the job, refunds its FUEL (once: the refund's cause is the job) and says so with `ai.job.failed`. */
async function fail(lease: Lease<AiJobRow>, code: string, message: string): Promise<void> {
  await lease.inTransaction(async (trx) => {
    const failed = await finishJob(trx, lease.row, {
      status: 'failed',
      errorCode: code,
      errorMessage: message,
    });
    await lease.complete(trx);
    await emit(
      trx,
      tenantOf(failed),
      'ai.job.failed',
      { ...toJob(failed), error_message: message },
      failed.metadata,
    );
    await refundFuel(trx, tenantOf(failed), fuelCauseOf(failed.id));
  });
}

function subjectGone(job: AiJobRow): JobFailure {
  return new JobFailure('subject_not_found', `The ${job.subject_type} ${job.subject_id} no longer exists.`);
}

function emptyFields(source: EnrichmentSource): EnrichmentSource['empty_fields'] {
  if (source.subject_type === 'contact') {
    const { contact } = source;
    return [
      ...(blank(contact.title) ? (['title'] as const) : []),
      ...(blank(contact.lifecycle_stage) ? (['lifecycle_stage'] as const) : []),
      ...(contact.tags.length ? [] : (['tags'] as const)),
    ];
  }
  const { company } = source;
  return [
    ...(blank(company.industry) ? (['industry'] as const) : []),
    ...(blank(company.business_description) ? (['business_description'] as const) : []),
  ];
}

function blank(value: string | null): boolean {
  return value === null || value.trim() === '';
}

/**
 * Writes the proposals into the fields that are empty now, through the owning module's update (so its
 * `contact.updated` or `company.updated` is emitted as for any edit, with the job's metadata); a field a
 * person filled since the proposal was made is left alone. Returns the fields written.
 */
async function applyProposals(
  trx: Trx,
  tenant: TenantScope,
  job: AiJobRow,
  proposals: EnrichmentProposal[],
): Promise<string[]> {
  if (!proposals.length) return [];
  // An empty patch locks the record and returns it as it is: the check below sees what the write will change.
  if (job.subject_type === 'contact') {
    const now = await patchContact(trx, tenant, job.subject_id, {});
    const patch: Record<string, unknown> = {};
    for (const { field, value } of proposals) {
      if (field === 'tags' && !now.tags.length && Array.isArray(value)) patch.tags = value;
      if (
        (field === 'title' || field === 'lifecycle_stage') &&
        blank(now[field]) &&
        typeof value === 'string'
      )
        patch[field] = value;
    }
    if (Object.keys(patch).length) await patchContact(trx, tenant, job.subject_id, patch, job.metadata);
    return Object.keys(patch);
  }
  const now = await patchCompany(trx, tenant, job.subject_id, {});
  const patch: Record<string, string> = {};
  for (const { field, value } of proposals)
    if (
      (field === 'industry' || field === 'business_description') &&
      blank(now[field]) &&
      typeof value === 'string'
    )
      patch[field] = value;
  if (Object.keys(patch).length) await patchCompany(trx, tenant, job.subject_id, patch, job.metadata);
  return Object.keys(patch);
}

function tenantOf(job: Pick<AiJobRow, 'org_id' | 'client_id'>): TenantScope {
  return { orgId: job.org_id, clientId: job.client_id };
}
