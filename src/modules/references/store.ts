import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';

/**
 * The rule for ids given in a request body (company_id, contact ids, deal_id, pipeline_id, stage_id):
 * an id that is not a record of the caller's tenant — missing, or another tenant's — is a 400
 * `validation_error` naming the field, with the same message either way, so other tenants' ids cannot
 * be probed. (Ids in the path are 404.) The contacts and companies tables belong to the contacts module,
 * so they are reached with plain SQL here rather than through their table types.
 */

const TABLES = {
  contact: { table: 'contacts', noun: 'a contact' },
  company: { table: 'companies', noun: 'a company' },
  deal: { table: 'deals', noun: 'a deal' },
  pipeline: { table: 'pipelines', noun: 'a pipeline' },
} as const;

export type ReferenceKind = keyof typeof TABLES;

export interface Reference {
  /** The body field that carried the id, as the caller wrote it. */
  field: string;
  kind: ReferenceKind;
  id: string | null | undefined;
}

/** Throws a 400 naming every given reference that is not a record of this tenant; one query for all. */
export async function assertReferences(
  db: Executor,
  tenant: { orgId: string; clientId: string },
  references: Reference[],
): Promise<void> {
  const given = references.filter((ref): ref is Reference & { id: string } => typeof ref.id === 'string');
  if (given.length === 0) return;
  const checks: RawBuilder<unknown>[] = given.map(
    (ref, i) =>
      sql`EXISTS (SELECT 1 FROM ${sql.table(TABLES[ref.kind].table)}
        WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND id = ${ref.id}) AS ${sql.ref(`r${i}`)}`,
  );
  const { rows } = await sql<Record<string, boolean>>`SELECT ${sql.join(checks)}`.execute(db);
  const missing = given.filter((_, i) => !rows[0][`r${i}`]);
  if (missing.length > 0) {
    throw errors.validation(
      missing.map((ref) => ({
        field: ref.field,
        message: `is not ${TABLES[ref.kind].noun} of this client (${ref.id})`,
      })),
    );
  }
}
