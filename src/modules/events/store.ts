import type { Tenant } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

/**
 * Events visible to a tenant: an agency key acting as itself sees every client of its org, as its
 * webhooks receive them; a client-scoped caller sees its client only.
 */
function visibleEvents(db: Executor, tenant: Tenant) {
  let query = db
    .selectFrom('event_log')
    .select(['id', 'type', 'created_at', 'data', 'metadata'])
    .where('org_id', '=', tenant.orgId);
  if (tenant.isClientScoped) query = query.where('client_id', '=', tenant.clientId);
  return query;
}

/** Events newest first. */
export function listEvents(
  db: Executor,
  tenant: Tenant,
  filter: { type?: string },
  page: PageRequest<string>,
) {
  let query = visibleEvents(db, tenant);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function findEvent(db: Executor, tenant: Tenant, id: string) {
  return visibleEvents(db, tenant).where('id', '=', id).executeTakeFirst();
}
