import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errors } from '../../platform/http/errors.ts';
import { type Lease, LeasedTable } from '../../platform/jobs/leased.ts';
import { BUILTIN_MODEL } from '../../providers/llm/builtin.ts';
import { type GistSource, type LlmProvider, LlmUnavailableError } from '../../providers/llm/index.ts';
import { debitFuel, refundFuel } from '../fuel/service.ts';
import {
  completeClaim,
  deleteClaim,
  findClaim,
  findGist,
  findReadyGist,
  type GistRow,
  generationInFlight,
  generationsInFlight,
  insertClaim,
  lockSubject,
  readSource,
  type Subject,
} from './store.ts';

/**
 * AI gists: a summary of a contact, company or deal, cached by a hash of what it is written from.
 *
 * A hit costs nothing. A miss claims the subject: one `generating` row per subject (a unique index, so
 * it holds across API processes) inserted in the transaction that debits its FUEL, the gist's id being
 * the debit's cause. The claiming statement itself checks that no ready gist of the source exists, under a
 * per-subject lock the completion takes too, so a request that read "no gist" just before another's gist
 * was written is served that gist instead of claiming again. The claim is leased work (platform/jobs/leased.ts)
 * the request holds: the model is called outside any transaction; its answer completes the row while the
 * lease holds, its failure removes the row and refunds the debit in one transaction. Requests that find a
 * generation in flight wait for it and are served its gist for free: ten parallel misses cost one FUEL and
 * get one id. A claim whose process died is given up (removed and refunded) once its lease is over, by the
 * next request for the subject or by the sweep: either takes it under a lease of its own first, so it is
 * given up once, and the request that was late cannot complete it afterwards.
 */

export type { Subject } from './store.ts';

export interface GistContext {
  db: Db;
  llm: LlmProvider;
  /** `provider:model`: gists of another writer are not served from the cache. */
  generator: string;
  fuelCost: number;
  /** How long a claim holds the subject: longer than the model may take. */
  leaseMs: number;
  log: Logger;
}

/** Beyond the model's time-out, how long a claim stays before waiting requests may give it up. */
const LEASE_MARGIN_MS = 15_000;
/** How long giving a dead claim up (one transaction) may take before another sweep may take it over. */
const GIVE_UP_LEASE_MS = 30_000;
/** Dead claims one sweep gives up at most. */
export const SWEEP_BATCH = 100;
const generations = new LeasedTable<GistRow>({ ...generationsInFlight, leaseMs: GIVE_UP_LEASE_MS });
const NOUNS = { contact: 'Contact', company: 'Company', deal: 'Deal' } as const;
const WAIT_STEP_MS = 25;
const MAX_WAIT_STEP_MS = 250;

export function gistContext(
  platform: { db: Db; llm: LlmProvider; log: Logger },
  config: Pick<Config, 'llmModel' | 'llmTimeoutMs' | 'gistFuelCost'>,
): GistContext {
  return {
    db: platform.db,
    llm: platform.llm,
    generator:
      platform.llm.name === 'builtin'
        ? `builtin:${BUILTIN_MODEL}`
        : `${platform.llm.name}:${config.llmModel}`,
    fuelCost: config.gistFuelCost,
    leaseMs: config.llmTimeoutMs + LEASE_MARGIN_MS,
    log: platform.log,
  };
}

export interface Gist {
  id: string;
  subject_type: Subject['type'];
  subject_id: string;
  summary: string;
  highlights: string[];
  model: string;
  source_hash: string;
  generated_at: Date;
  /** True when this request was served a gist it did not generate (and so did not pay for). */
  cached: boolean;
  /** FUEL this request cost: the gist's price on a miss, 0 on a hit. */
  fuel_cost: number;
}

/** `POST /ai/{contacts|companies|deals}/{id}/gist`; `force` generates a new gist even on a hit. */
export async function gistOf(
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  force: boolean,
): Promise<Gist> {
  const { db } = context;
  const read = await readSource(db, tenant, subject, context.generator);
  if (!read) throw errors.notFound(NOUNS[subject.type], subject.id);
  if (read.hit && !force) return toGist(read.hit, true, 0);
  const source = read.source as GistSource;
  const { hash } = read;
  let checked = !force;
  const giveUpAt = Date.now() + 2 * context.leaseMs;
  let joined = false;
  for (;;) {
    // The first round's hit was read with the source; later rounds (after a failed or other generation) look again.
    if ((!force || joined) && !checked) {
      const hit = await findReadyGist(db, tenant, subject, hash, context.generator);
      if (hit) return toGist(hit, true, 0);
    }
    checked = false;
    // Unless forced, a ready gist of this source (written since the read above) is the answer, not a claim.
    const claim = await claimSubject(context, tenant, subject, hash, !force || joined);
    if (claim) return generate(context, tenant, claim, source);
    // Another request generates this subject: its gist, when done, is this one's answer (if the source matches).
    const done = await awaitGeneration(context, tenant, subject, giveUpAt);
    if (done && done.status === 'ready' && done.source_hash === hash && done.generator === context.generator)
      return toGist(done, true, 0);
    joined = true;
  }
}

/**
 * The claim row, its FUEL debited, committed; undefined when the subject has a generation in flight or,
 * with `unlessReady`, a ready gist of this source.
 */
function claimSubject(
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  hash: string,
  unlessReady: boolean,
): Promise<GistRow | undefined> {
  return inTransaction(context.db, async (trx) => {
    await lockSubject(trx, tenant, subject);
    const claim = await insertClaim(trx, tenant, {
      id: newId(),
      leaseId: newId(),
      subject,
      hash,
      generator: context.generator,
      fuelCost: context.fuelCost,
      leaseMs: context.leaseMs,
      unlessReady,
    });
    // 402 rolls the claim back with the debit: nothing changed.
    if (claim)
      await debitFuel(trx, tenant, { ...causeOf(claim.id), reason: 'gist', amount: context.fuelCost });
    return claim;
  });
}

async function generate(
  context: GistContext,
  tenant: TenantScope,
  claim: GistRow,
  source: GistSource,
): Promise<Gist> {
  const lease = generations.lease(context.db, claim, claim.lease_id as string);
  let written: Awaited<ReturnType<LlmProvider['summarize']>>;
  try {
    written = await context.llm.summarize(source);
  } catch (error) {
    await giveUp(lease);
    if (error instanceof LlmUnavailableError) throw errors.aiUnavailable(error.message);
    throw error;
  }
  const row = await inTransaction(context.db, async (trx) => {
    await lockSubject(trx, tenant, { type: claim.subject_type, id: claim.subject_id });
    return (await lease.held(trx)) ? completeClaim(trx, tenant, claim.id, written) : undefined;
  });
  if (!row) throw errors.aiUnavailable('the model took longer than the claim on this record lasts.');
  return toGist(row, false, claim.fuel_cost);
}

/**
 * Waits until the subject's generation in flight ends, and returns its row (undefined when it failed).
 * A claim whose lease is over is given up here, and the caller claims afresh.
 */
async function awaitGeneration(
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  giveUpAt: number,
): Promise<GistRow | undefined> {
  let step = WAIT_STEP_MS;
  let watched: string | null = null;
  for (;;) {
    const claim = await findClaim(context.db, tenant, subject);
    if (!claim) return watched ? findGist(context.db, tenant, watched) : undefined;
    watched = claim.id;
    if (claim.expired) {
      const [dead] = await new LeasedTable<GistRow>({
        ...generationInFlight(tenant, claim.id),
        leaseMs: GIVE_UP_LEASE_MS,
      }).claim(context.db, 1);
      if (dead) await giveUp(dead);
      return undefined;
    }
    if (Date.now() > giveUpAt)
      throw errors.aiUnavailable('another request for this record is still generating.');
    await new Promise((resolve) => setTimeout(resolve, step));
    step = Math.min(step * 2, MAX_WAIT_STEP_MS);
  }
}

/** Removes a claim and refunds its FUEL, in one transaction; false when the lease was lost (nothing changed). */
async function giveUp(lease: Lease<GistRow>): Promise<boolean> {
  const tenant = { orgId: lease.row.org_id, clientId: lease.row.client_id };
  const done = await lease.inTransaction(async (trx) => {
    await deleteClaim(trx, tenant, lease.row.id);
    await refundFuel(trx, tenant, causeOf(lease.row.id));
    return true;
  });
  return done ?? false;
}

/**
 * One round of the sweep: gives up, and refunds, claims whose lease ran out (their process died); how many.
 * Giving up is the end of a dead claim either way, so there is no attempt to count: one that fails is
 * taken again by a later sweep once this sweep's lease is over.
 */
export async function sweepExpiredClaims(db: Db): Promise<number> {
  let released = 0;
  for (const lease of await generations.claim(db, SWEEP_BATCH)) if (await giveUp(lease)) released++;
  return released;
}

function causeOf(gistId: string) {
  return { referenceType: 'gist', referenceId: gistId };
}

function toGist(row: GistRow, cached: boolean, fuelCost: number): Gist {
  return {
    id: row.id,
    subject_type: row.subject_type,
    subject_id: row.subject_id,
    summary: row.summary as string,
    highlights: row.highlights ?? [],
    model: row.model as string,
    source_hash: row.source_hash,
    generated_at: row.generated_at as Date,
    cached,
    fuel_cost: fuelCost,
  };
}
