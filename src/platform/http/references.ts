import type { TenantScope } from '../auth/tenant.ts';
import type { Executor } from '../db/pool.ts';
import { errors } from './errors.ts';

/** A kind of record other modules refer to by id; the module that owns it exports one. */
export interface Referable {
  /** What an id of it names, with its article: "a contact". */
  noun: string;
  /** Which of `ids` name records of the tenant. */
  existing(db: Executor, tenant: TenantScope, ids: string[]): Promise<string[]>;
}

/** An id given in a request body (company_id, contact_id, deal_id, pipeline_id) and what it must name. */
export interface Reference {
  /** The body field that carried the id, as the caller wrote it. */
  field: string;
  id: string | null | undefined;
  kind: Referable;
}

/**
 * True when a write of one statement into `table` failed on a foreign key: an id in the body that
 * is not a record of the tenant. The statement wrote nothing, and the caller falls back to the path
 * that checks with `assertReferences`, which words the error.
 */
export function referenceRefused(table: string, error: unknown): boolean {
  const pgError = error as { code?: string; table?: string };
  return pgError.code === '23503' && pgError.table === table;
}

/**
 * The rule for ids in a body: one that is not a record of the caller's tenant — missing, or another
 * tenant's — is a 400 `validation_error` naming the field, with the same message either way, so other
 * tenants' ids cannot be probed. (Ids in the path are 404.) Every given reference is checked, one query
 * per kind, and all that fail are named in one error.
 */
export async function assertReferences(
  db: Executor,
  tenant: TenantScope,
  references: Reference[],
): Promise<void> {
  const given = references.filter((ref): ref is Reference & { id: string } => typeof ref.id === 'string');
  const found = new Map<Referable, Set<string>>();
  for (const kind of new Set(given.map((ref) => ref.kind))) {
    const ids = given.filter((ref) => ref.kind === kind).map((ref) => ref.id);
    found.set(kind, new Set(await kind.existing(db, tenant, ids)));
  }
  const missing = given.filter((ref) => !found.get(ref.kind)?.has(ref.id.toLowerCase()));
  if (missing.length > 0) {
    throw errors.validation(
      missing.map((ref) => ({
        field: ref.field,
        message: `is not ${ref.kind.noun} of this client (${ref.id})`,
      })),
    );
  }
}
