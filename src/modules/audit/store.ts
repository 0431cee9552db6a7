import type { Generated, Insertable, Selectable } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import type { Json } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

export type ActorType = 'user' | 'api_key' | 'operator';

export interface AuditLogTable {
  org_id: string;
  id: string;
  actor_type: ActorType;
  actor_id: string | null;
  actor_label: string;
  action: string;
  record_type: string;
  record_id: string;
  client_id: string | null;
  ip: string | null;
  details: Json<Record<string, unknown>>;
  created_at: Generated<Date>;
}

export type AuditRow = Selectable<AuditLogTable>;

declare module '../../platform/db/schema.ts' {
  interface Database {
    audit_log: AuditLogTable;
  }
}

export interface AuditFilters {
  action?: string;
  record_type?: string;
  record_id?: string;
  actor_type?: ActorType;
  actor_id?: string;
}

export async function insertAudit(trx: Trx, row: Insertable<AuditLogTable>): Promise<void> {
  await trx.insertInto('audit_log').values(row).execute();
}

/** Newest first (UUIDv7 ids), after the cursor's id. */
export function listAudit(db: Executor, orgId: string, page: PageRequest<string>, filters: AuditFilters) {
  let query = db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId);
  if (filters.action) query = query.where('action', '=', filters.action);
  if (filters.record_type) query = query.where('record_type', '=', filters.record_type);
  if (filters.record_id) query = query.where('record_id', '=', filters.record_id);
  if (filters.actor_type) query = query.where('actor_type', '=', filters.actor_type);
  if (filters.actor_id) query = query.where('actor_id', '=', filters.actor_id);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}
