import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Trx } from '../../platform/db/pool.ts';
import { emit } from '../../platform/events/emit.ts';
import { changedFields } from '../../platform/fields.ts';
import type { ChannelRecord } from './channel-store.ts';
import type { ContactRecord } from './store.ts';

/** A phone or email added, changed or removed, as `contact.updated` reports it. */
export interface SubRecordChange {
  type: 'phone' | 'email';
  action: 'added' | 'updated' | 'deleted';
  record: ChannelRecord;
}

export function emitContactCreated(trx: Trx, tenant: TenantScope, contact: ContactRecord) {
  return emit(trx, tenant, 'contact.created', { ...contact });
}

/**
 * `contact.updated`: the contact as it is now, the names of the fields that changed with their
 * previous values, and the phones or emails added, changed or removed.
 */
export function emitContactUpdated(
  trx: Trx,
  tenant: TenantScope,
  before: ContactRecord,
  after: ContactRecord,
  subRecords: SubRecordChange[] = [],
  metadata: Record<string, unknown> = {},
) {
  const { updated_at: _updatedAt, company: _company, ...fields } = after;
  const changed: string[] = Object.keys(changedFields<Partial<ContactRecord>>(before, fields));
  const previous = Object.fromEntries(changed.map((key) => [key, before[key as keyof ContactRecord]]));
  for (const change of subRecords) {
    const field = change.type === 'phone' ? 'phones' : 'emails';
    if (!changed.includes(field)) changed.push(field);
  }
  return emit(
    trx,
    tenant,
    'contact.updated',
    {
      ...after,
      changed_fields: changed,
      previous_attributes: previous,
      ...(subRecords.length ? { sub_records: subRecords } : {}),
    },
    metadata,
  );
}

export function emitContactArchived(trx: Trx, tenant: TenantScope, contact: ContactRecord) {
  return emit(trx, tenant, 'contact.archived', { ...contact });
}
