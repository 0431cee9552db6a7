import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor, Trx } from '../../platform/db/pool.ts';
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
  findVersionedGist,
  type GistRow,
  generationInFlight,
  generationsInFlight,
  insertClaim,
  lockSubject,
  readSource,
  type Subject,
  startSourceVersion,
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
 *
 * A hit is read by key first: each subject asked about has a source version, bumped by every write to
 * what its gist reads, and a gist carries the version it was written from or last found to match
 * (`gist_versions`, migration 1050). When that misses, the source is rebuilt and hashed as before; a
 * gist of the same hash is still a free hit, and is stamped with the current version for the next request.
 *
 * This file opens no transaction: each step takes the `trx` it must be atomic in, and the edges (the
 * route's `serveGist` in routes.ts, the `gist_claims` loop in jobs.ts) open them. A miss is two
 * transactions by design: the claim commits before the model is called, the completion (or the give-up)
 * is a second one.
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
/** Every generation in flight, as leased work: the sweep takes those whose lease is over. */
export const generations = new LeasedTable<GistRow>({ ...generationsInFlight, leaseMs: GIVE_UP_LEASE_MS });
const NOUNS = { contact: 'Contact', company: 'Company', deal: 'Deal' } as const;

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

/**
 * The gist of the subject's current source version by this context's writer, as a hit (free), if any;
 * `versioned` false when the subject has no source version yet.
 */
export async function versionedGist(
  db: Executor,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
): Promise<{ versioned: boolean; hit: Gist | undefined }> {
  const { versioned, hit } = await findVersionedGist(db, tenant, subject, context.generator);
  return { versioned, hit: hit ? toGist(hit, true, 0) : undefined };
}

/** Gives the subject a source version, committed before its source is read (the caller's `db`, no transaction). */
export function startVersioning(db: Db, tenant: TenantScope, subject: Subject): Promise<void> {
  return startSourceVersion(db, tenant, subject);
}

/**
 * The record's gist source and hash, its cached gist, and the source version a gist written from it
 * may be stamped with (`sourceVersion`, null when not known); 404 when the record is absent.
 */
export async function readGistSource(
  db: Executor,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
): Promise<{ source: GistSource; hash: string; sourceVersion: string | null; hit: Gist | undefined }> {
  const read = await readSource(db, tenant, subject, context.generator);
  if (!read) throw errors.notFound(NOUNS[subject.type], subject.id);
  return {
    source: read.source as GistSource,
    hash: read.hash,
    sourceVersion: read.stamp,
    hit: read.hit ? toGist(read.hit, true, 0) : undefined,
  };
}

/** The ready gist of this source by this context's writer, as a hit (free), if any. */
export async function readyGist(
  db: Executor,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  hash: string,
): Promise<Gist | undefined> {
  const hit = await findReadyGist(db, tenant, subject, hash, context.generator);
  return hit ? toGist(hit, true, 0) : undefined;
}

/**
 * Claims the subject: inserts the `generating` row, stamped with the source version its source was read
 * at (if known), and debits its FUEL in `trx`, which the caller commits before calling the model.
 * Undefined when the subject has a generation in flight or, with `unlessReady`, a ready gist of this
 * source. A 402 rolls the claim back with the debit: nothing changed.
 */
export async function claimSubject(
  trx: Trx,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  read: { hash: string; sourceVersion: string | null },
  unlessReady: boolean,
): Promise<GistRow | undefined> {
  await lockSubject(trx, tenant, subject);
  const claim = await insertClaim(trx, tenant, {
    id: newId(),
    leaseId: newId(),
    subject,
    hash: read.hash,
    sourceVersion: read.sourceVersion,
    generator: context.generator,
    fuelCost: context.fuelCost,
    leaseMs: context.leaseMs,
    unlessReady,
  });
  if (claim) await debitFuel(trx, tenant, { ...causeOf(claim.id), reason: 'gist', amount: context.fuelCost });
  return claim;
}

/** The lease a committed claim holds (its request's): the handle every later write goes through. */
export function claimLease(db: Db, claim: GistRow): Lease<GistRow> {
  return generations.lease(db, claim, claim.lease_id as string);
}

/** Calls the model, outside any transaction; `LlmUnavailableError` when it failed or timed out. */
export function writeGist(context: GistContext, source: GistSource): ReturnType<LlmProvider['summarize']> {
  return context.llm.summarize(source);
}

/**
 * Turns the claim into the ready gist, under the subject's lock, if the claim's lease still holds;
 * undefined (nothing written) when it was lost.
 */
export async function completeGeneration(
  trx: Trx,
  tenant: TenantScope,
  lease: Lease<GistRow>,
  written: Awaited<ReturnType<LlmProvider['summarize']>>,
): Promise<Gist | undefined> {
  const claim = lease.row;
  await lockSubject(trx, tenant, { type: claim.subject_type, id: claim.subject_id });
  if (!(await lease.held(trx))) return undefined;
  return toGist(await completeClaim(trx, tenant, claim.id, written), false, claim.fuel_cost);
}

/** The error a request sees when its generation failed (its claim already given up). */
export function generationFailed(error: unknown): unknown {
  return error instanceof LlmUnavailableError ? errors.aiUnavailable(error.message) : error;
}

/** The error a request sees when the model answered after its claim's lease ran out. */
export function claimLost(): Error {
  return errors.aiUnavailable('the model took longer than the claim on this record lasts.');
}

/** The error a request sees when it waited for another's generation longer than it may. */
export function waitedTooLong(): Error {
  return errors.aiUnavailable('another request for this record is still generating.');
}

/** The subject's generation in flight, if any, and whether its lease is over. */
export function generationOf(
  db: Executor,
  tenant: TenantScope,
  subject: Subject,
): Promise<(GistRow & { expired: boolean }) | undefined> {
  return findClaim(db, tenant, subject);
}

/** How a generation a request waited for ended: its gist if it served this source, else undefined. */
export async function endedGeneration(
  db: Executor,
  context: GistContext,
  tenant: TenantScope,
  id: string,
  hash: string,
): Promise<Gist | undefined> {
  const done = await findGist(db, tenant, id);
  return done && done.status === 'ready' && done.source_hash === hash && done.generator === context.generator
    ? toGist(done, true, 0)
    : undefined;
}

/** A dead generation (its lease over) of the tenant, to be taken under a lease of its own and given up. */
export function deadGeneration(tenant: TenantScope, id: string): LeasedTable<GistRow> {
  return new LeasedTable<GistRow>({ ...generationInFlight(tenant, id), leaseMs: GIVE_UP_LEASE_MS });
}

/**
 * Gives a claim up: removes it and refunds its FUEL, in `trx`, which holds the claim's lease
 * (`lease.inTransaction`).
 */
export async function giveUpClaim(trx: Trx, claim: GistRow): Promise<void> {
  const tenant = { orgId: claim.org_id, clientId: claim.client_id };
  await deleteClaim(trx, tenant, claim.id);
  await refundFuel(trx, tenant, causeOf(claim.id));
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
