import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Db } from '../../platform/db/pool.ts';
import { inTransaction } from '../../platform/db/transaction.ts';
import { errorResponses, IdParams, Query, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import {
  claimLease,
  claimLost,
  claimSubject,
  completeGeneration,
  deadGeneration,
  endedGeneration,
  type Gist,
  type GistContext,
  generationFailed,
  generationOf,
  gistContext,
  giveUpClaim,
  readGistSource,
  readyGist,
  type Subject,
  startVersioning,
  versionedGist,
  waitedTooLong,
  writeGist,
} from './service.ts';

const tags = ['ai'];

const GistSchema = Type.Object(
  {
    id: Uuid(),
    subject_type: Type.Union([Type.Literal('contact'), Type.Literal('company'), Type.Literal('deal')]),
    subject_id: Uuid(),
    summary: Type.String({ description: 'A few plain sentences.' }),
    highlights: Type.Array(Type.String(), { description: 'Short facts a reader should not miss.' }),
    model: Type.String({ description: 'The model that wrote it.' }),
    source_hash: Type.String({
      description: 'sha256 of what the gist was written from; any change to it is a cache miss.',
    }),
    generated_at: Timestamp(),
    cached: Type.Boolean({ description: 'true when this request was served an existing gist (and cost 0).' }),
    fuel_cost: Type.Integer({ description: 'FUEL this request cost: 1 on a miss, 0 on a hit.' }),
  },
  { description: 'An AI-written summary of a contact, company or deal.' },
);

const GistQuery = Query({
  force: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'true writes a new gist even when one is cached (costs 1 FUEL).',
    }),
  ),
});

const SUBJECTS: { path: string; type: Subject['type']; noun: string }[] = [
  { path: 'contacts', type: 'contact', noun: 'contact' },
  { path: 'companies', type: 'company', noun: 'company' },
  { path: 'deals', type: 'deal', noun: 'deal' },
];

export const aiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, log, config, providers } = app.platform;
  const context = gistContext({ db, llm: providers.llm, log }, config);
  for (const subject of SUBJECTS) {
    app.post(
      `/ai/${subject.path}/:id/gist`,
      {
        schema: {
          operationId: `ai.${subject.path}.gist`,
          tags,
          summary: `Summarize a ${subject.noun}: 1 FUEL on a cache miss, 0 on a hit`,
          params: IdParams,
          querystring: GistQuery,
          response: { 200: Type.Object({ gist: GistSchema }), ...errorResponses(402, 404, 502) },
        },
      },
      async (request) => ({
        gist: await serveGist(
          db,
          context,
          request.tenant,
          { type: subject.type, id: request.params.id },
          request.query.force ?? false,
        ),
      }),
    );
  }
};

const WAIT_STEP_MS = 25;
const MAX_WAIT_STEP_MS = 250;

/**
 * The edge of `POST /ai/…/gist` (the MCP tool reaches it through this route): a hit is read, a miss is
 * generated, a generation in flight is waited for. This is where its transactions are opened (see the
 * service's header for why the claim is one and the completion another).
 */
async function serveGist(
  db: Db,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  force: boolean,
): Promise<Gist> {
  const keyed = await versionedGist(db, context, tenant, subject);
  if (keyed.hit && !force) return keyed.hit;
  // Committed before the source is read, so every write after this read bumps the version read with it.
  if (!keyed.versioned) await startVersioning(db, tenant, subject);
  const { source, hash, sourceVersion, hit } = await readGistSource(db, context, tenant, subject);
  if (hit && !force) return hit;
  let checked = !force;
  const giveUpAt = Date.now() + 2 * context.leaseMs;
  let joined = false;
  for (;;) {
    // The first round's hit was read with the source; later rounds (after a failed or other generation) look again.
    if ((!force || joined) && !checked) {
      const ready = await readyGist(db, context, tenant, subject, hash);
      if (ready) return ready;
    }
    checked = false;
    // Transaction 1: the claim and its debit commit before the model is called. Unless forced, a ready
    // gist of this source (written since the read above) is the answer, not a claim.
    const claim = await inTransaction(db, (trx) =>
      claimSubject(trx, context, tenant, subject, { hash, sourceVersion }, !force || joined),
    );
    if (claim) {
      const lease = claimLease(db, claim);
      let written: Awaited<ReturnType<typeof writeGist>>;
      try {
        written = await writeGist(context, source);
      } catch (error) {
        // Transaction 2 (failure): the claim removed and refunded, if its lease still holds.
        await lease.inTransaction((trx, row) => giveUpClaim(trx, row));
        throw generationFailed(error);
      }
      // Transaction 2 (success): the claim becomes the gist, if its lease still holds.
      const gist = await inTransaction(db, (trx) => completeGeneration(trx, tenant, lease, written));
      if (!gist) throw claimLost();
      return gist;
    }
    // Another request generates this subject: its gist, when done, is this one's answer (if the source matches).
    const done = await awaitGeneration(db, context, tenant, subject, hash, giveUpAt);
    if (done) return done;
    joined = true;
  }
}

/**
 * Waits until the subject's generation in flight ends, and returns its gist (undefined when it failed
 * or served another source). A claim whose lease is over is given up here, under a lease of this
 * request's own, and the caller claims afresh.
 */
async function awaitGeneration(
  db: Db,
  context: GistContext,
  tenant: TenantScope,
  subject: Subject,
  hash: string,
  giveUpAt: number,
): Promise<Gist | undefined> {
  let step = WAIT_STEP_MS;
  let watched: string | null = null;
  for (;;) {
    const claim = await generationOf(db, tenant, subject);
    if (!claim) return watched ? endedGeneration(db, context, tenant, watched, hash) : undefined;
    watched = claim.id;
    if (claim.expired) {
      const [dead] = await deadGeneration(tenant, claim.id).claim(db, 1);
      if (dead) await dead.inTransaction((trx, row) => giveUpClaim(trx, row));
      return undefined;
    }
    if (Date.now() > giveUpAt) throw waitedTooLong();
    await new Promise((resolve) => setTimeout(resolve, step));
    step = Math.min(step * 2, MAX_WAIT_STEP_MS);
  }
}
