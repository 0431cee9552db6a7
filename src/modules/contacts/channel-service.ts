import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Db, Executor } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import {
  type Channel,
  type ChannelRecord,
  countChannels,
  deleteChannel,
  demotePrimary,
  findChannel,
  findChannelByValue,
  insertChannel,
  listChannels,
  promoteOldest,
  updateChannel,
} from './channel-store.ts';
import { emitContactUpdated, type SubRecordChange, sameValue } from './events.ts';
import { type ContactRecord, contactExists, lockContactRecord, updateContact } from './store.ts';

/**
 * The rules of a contact's phones and emails: the value is unique in the tenant; the first one is
 * primary; making one primary demotes the previous; removing the primary promotes the oldest left.
 * Every change is a `contact.updated` of the contact and bumps its `updated_at`.
 */

const NOUN = { phone: 'Phone', email: 'Email' } as const;

async function lockContact(trx: Executor, tenant: TenantScope, contactId: string): Promise<ContactRecord> {
  const contact = await lockContactRecord(trx, tenant, contactId);
  if (!contact) throw errors.notFound('Contact', contactId);
  return contact;
}

export async function listContactChannels(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  page: { after?: [number, string]; limit: number },
): Promise<ChannelRecord[]> {
  const rows = await listChannels(db, channel, tenant, contactId, page);
  if (rows.length === 0 && !(await contactExists(db, tenant, contactId))) {
    throw errors.notFound('Contact', contactId);
  }
  return rows;
}

export async function getContactChannel(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
): Promise<ChannelRecord> {
  const row = await findChannel(db, channel, tenant, contactId, id);
  if (!row) throw errors.notFound(NOUN[channel.kind], id);
  return row;
}

export interface ChannelInput {
  value: string;
  is_primary?: boolean;
  fields: Record<string, unknown>;
}

/** Adds a phone or email; the value already on this contact is 200 `created: false`, on another 409. */
export async function addContactChannel(
  trx: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  input: ChannelInput,
): Promise<{ record: ChannelRecord; created: boolean }> {
  const before = await lockContact(trx, tenant, contactId);
  const existing = await findChannelByValue(trx, channel, tenant, input.value);
  if (existing) {
    if (existing.contact_id === contactId) return { record: existing, created: false };
    throw inUse(channel, existing.contact_id);
  }
  const first = (await countChannels(trx, channel, tenant, contactId)) === 0;
  const isPrimary = first || input.is_primary === true;
  if (isPrimary && !first) await demotePrimary(trx, channel, tenant, contactId);
  const record = await insertChannel(trx, channel, tenant, {
    id: newId(),
    contactId,
    value: input.value,
    isPrimary,
    fields: input.fields,
  });
  if (!record) {
    // Taken since the check above by a request for another contact (this one is locked).
    const owner = await findChannelByValue(trx, channel, tenant, input.value);
    throw inUse(channel, owner?.contact_id ?? null);
  }
  const after = isPrimary ? { ...before, [channel.kind]: input.value } : { ...before };
  await touchContact(trx, tenant, before, after, [{ type: channel.kind, action: 'added', record }]);
  return { record, created: true };
}

export async function patchContactChannel(
  db: Db,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
  patch: Record<string, unknown> & { is_primary?: boolean },
): Promise<ChannelRecord> {
  return db.transaction().execute(async (trx) => {
    const before = await lockContact(trx, tenant, contactId);
    const current = await getContactChannel(trx, channel, tenant, contactId, id);
    const changes: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || key === 'is_primary') continue;
      const stored = current[key];
      const wanted = key === 'consented_at' && typeof value === 'string' ? new Date(value) : value;
      if (!sameValue(stored, wanted)) changes[key] = wanted;
    }
    const after = { ...before };
    const subRecords: SubRecordChange[] = [];
    if (patch.is_primary === true && !current.is_primary) {
      await demotePrimary(trx, channel, tenant, contactId);
      changes.is_primary = true;
      after[channel.kind] = current[channel.kind] as string;
    }
    if (patch.is_primary === false && current.is_primary) {
      // The primary steps down only in favour of another: the oldest of the others.
      changes.is_primary = false;
      await updateChannel(trx, channel, tenant, id, { is_primary: false });
      const promoted = await promoteOldest(trx, channel, tenant, contactId, id);
      if (!promoted) {
        throw errors.invalidField(
          'is_primary',
          `cannot be false: this is the contact's only ${channel.kind}, so it is the primary`,
        );
      }
      after[channel.kind] = promoted[channel.kind] as string;
      subRecords.push({ type: channel.kind, action: 'updated', record: promoted });
    }
    if (Object.keys(changes).length === 0) return current;
    const record = await updateChannel(trx, channel, tenant, id, changes);
    subRecords.unshift({ type: channel.kind, action: 'updated', record });
    await touchContact(trx, tenant, before, after, subRecords);
    return record;
  });
}

export async function deleteContactChannel(
  db: Db,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const before = await lockContact(trx, tenant, contactId);
    const current = await getContactChannel(trx, channel, tenant, contactId, id);
    await deleteChannel(trx, channel, tenant, id);
    const after = { ...before };
    const subRecords: SubRecordChange[] = [{ type: channel.kind, action: 'deleted', record: current }];
    if (current.is_primary) {
      const promoted = await promoteOldest(trx, channel, tenant, contactId, id);
      after[channel.kind] = (promoted?.[channel.kind] as string | undefined) ?? null;
      if (promoted) subRecords.push({ type: channel.kind, action: 'updated', record: promoted });
    }
    await touchContact(trx, tenant, before, after, subRecords);
  });
}

async function touchContact(
  trx: Executor,
  tenant: TenantScope,
  before: ContactRecord,
  after: ContactRecord,
  subRecords: SubRecordChange[],
): Promise<void> {
  after.updated_at = new Date();
  await updateContact(
    trx,
    tenant,
    before.id,
    { primary_email: after.email, primary_phone: after.phone },
    after.updated_at,
  );
  await emitContactUpdated(trx, tenant, before, after, subRecords);
}

function inUse(channel: Channel, contactId: string | null) {
  return errors.conflict(
    channel.kind === 'phone' ? 'phone_in_use' : 'email_in_use',
    `This ${channel.kind} belongs to another contact of this client.`,
    contactId ? { contact_id: contactId } : undefined,
  );
}
