import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import type { ChannelRecord } from './channel-store.ts';
import type { ContactRecord } from './store.ts';

/** A phone or email added, changed or removed, as `contact.updated` reports it. */
export interface SubRecordChange {
  type: 'phone' | 'email';
  action: 'added' | 'updated' | 'deleted';
  record: ChannelRecord;
}

export function emitContactCreated(trx: Executor, tenant: TenantScope, contact: ContactRecord) {
  return emit(trx, tenant, 'contact.created', { ...contact });
}

/**
 * `contact.updated`: the contact as it is now, the names of the fields that changed with their
 * previous values, and the phones or emails added, changed or removed.
 */
export function emitContactUpdated(
  trx: Executor,
  tenant: TenantScope,
  before: ContactRecord,
  after: ContactRecord,
  subRecords: SubRecordChange[] = [],
) {
  const changedFields: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after) as (keyof ContactRecord)[]) {
    if (key === 'updated_at' || key === 'company') continue;
    if (!sameValue(before[key], after[key])) {
      changedFields.push(key);
      previous[key] = before[key];
    }
  }
  for (const change of subRecords) {
    const field = change.type === 'phone' ? 'phones' : 'emails';
    if (!changedFields.includes(field)) changedFields.push(field);
  }
  return emit(trx, tenant, 'contact.updated', {
    ...after,
    changed_fields: changedFields,
    previous_attributes: previous,
    ...(subRecords.length ? { sub_records: subRecords } : {}),
  });
}

export function emitContactArchived(trx: Executor, tenant: TenantScope, contact: ContactRecord) {
  return emit(trx, tenant, 'contact.archived', { ...contact });
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  return a === b;
}
