import { sql } from 'kysely';
import type { TenantScope } from '../auth/tenant.ts';
import type { Executor } from './pool.ts';
import type { Database } from './schema.ts';

/** The tables whose rows belong to a tenant by `org_id` and `client_id` and are named by `id`. */
export type TenantTable = {
  [T in keyof Database]: Database[T] extends { id: string; org_id: string; client_id: string } ? T : never;
}[keyof Database];

/**
 * The tenant filter every query of a tenant's table carries (`org_id` and `client_id`), as a piece
 * for `$call`: `db.selectFrom('deals').selectAll().$call(whereTenant(tenant))`. Selects, updates and
 * deletes alike.
 */
export function whereTenant(tenant: TenantScope) {
  return <QB extends TenantFilterable<QB>>(qb: QB): QB =>
    qb.where('org_id', '=', tenant.orgId).where('client_id', '=', tenant.clientId);
}

/** One row of a tenant's table by its id, within the tenant: `whereTenant` and `id`. */
export function whereOwned(tenant: TenantScope, id: string) {
  return <QB extends TenantFilterable<QB>>(qb: QB): QB => whereTenant(tenant)(qb).where('id', '=', id);
}

/** A select, update or delete of a tenant table (`org_id`, `client_id`, `id`); keeps the builder's type. */
interface TenantFilterable<QB> {
  where(column: 'org_id' | 'client_id' | 'id', op: '=', value: string): QB;
}

/** Which of `ids` name rows of `table` that belong to the tenant: a store's ownership check of its own table. */
export async function idsOfTenant(
  db: Executor,
  table: TenantTable,
  tenant: TenantScope,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM ${sql.table(table)}
    WHERE org_id = ${tenant.orgId} AND client_id = ${tenant.clientId} AND id = ANY(${ids}::uuid[])`.execute(
    db,
  );
  return rows.map((row) => row.id);
}
