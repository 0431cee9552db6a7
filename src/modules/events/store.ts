import type { Tenant } from '../../platform/auth/tenant.ts';
import type { Db } from '../../platform/db/pool.ts';

/**
 * Events visible to a tenant: an agency key acting as itself sees every client of its org, as its
 * webhooks receive them; a client-scoped caller sees its client only.
 */
function visibleEvents(db: Db, tenant: Tenant) {
  let query = db.selectFrom('events').selectAll().where('org_id', '=', tenant.orgId);
  if (tenant.isClientScoped) query = query.where('client_id', '=', tenant.clientId);
  return query;
}

export function listEvents(
  db: Db,
  tenant: Tenant,
  filter: { type?: string; before?: string; limit: number },
) {
  let query = visibleEvents(db, tenant);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.before) query = query.where('id', '<', filter.before);
  return query
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

export function findEvent(db: Db, tenant: Tenant, id: string) {
  return visibleEvents(db, tenant).where('id', '=', id).executeTakeFirst();
}
