import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { changedFields, hasChanges } from '../../platform/fields.ts';
import { errors } from '../../platform/http/errors.ts';
import type { Keyset, PageRequest } from '../../platform/http/pagination.ts';
import {
  type Channel,
  type ChannelCursor,
  type ChannelRecord,
  countChannels,
  deleteChannel,
  demotePrimary,
  findChannel,
  findChannelByValue,
  insertChannel,
  listChannels,
  PHONE,
  phoneStanding,
  promoteOldest,
  updateChannel,
} from './channel-store.ts';
import { emitContactUpdated, type SubRecordChange } from './events.ts';
import { normalizeEmail, normalizePhone } from './identity.ts';
import { type ContactRecord, findContactIds, lockContactRecord, updateContact } from './store.ts';

/**
 * The rules of a contact's phones and emails: the value is unique in the tenant; the first one is
 * primary; making one primary demotes the previous; removing the primary promotes the oldest left.
 * Every change is a `contact.updated` of the contact and bumps its `updated_at`.
 */

export { type Channel, EMAIL, PHONE } from './channel-store.ts';

const NOUN = { phone: 'Phone', email: 'Email' } as const;

/** A contact's phones and emails page primary first, then oldest first. */
export const channelKeyset: Keyset<ChannelRecord, ChannelCursor> = {
  key: (row) => [row.is_primary ? 0 : 1, row.id],
  cursor: ([rank, id]) => (typeof rank === 'number' && typeof id === 'string' ? { rank, id } : undefined),
};

async function lockContact(trx: Trx, tenant: TenantScope, contactId: string): Promise<ContactRecord> {
  const contact = await lockContactRecord(trx, tenant, contactId);
  if (!contact) throw errors.notFound('Contact', contactId);
  return contact;
}

export async function listContactChannels(
  db: Executor,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  page: PageRequest<ChannelCursor>,
): Promise<ChannelRecord[]> {
  const rows = await listChannels(db, channel, tenant, contactId, page);
  if (rows.length === 0 && (await findContactIds(db, tenant, [contactId])).length === 0) {
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
  /** The phone or email as given; stored lower-cased (email) or in E.164 (phone). */
  value: string;
  is_primary?: boolean;
  fields: Record<string, unknown>;
}

/** Adds a phone or email; the value already on this contact is 200 `created: false`, on another 409. */
export async function addContactChannel(
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  given: ChannelInput,
  defaultCountry: string,
): Promise<{ record: ChannelRecord; created: boolean }> {
  const input = {
    ...given,
    value:
      channel.kind === 'phone' ? normalizePhone(given.value, defaultCountry) : normalizeEmail(given.value),
  };
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
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
  patch: Record<string, unknown> & { is_primary?: boolean },
): Promise<ChannelRecord> {
  const before = await lockContact(trx, tenant, contactId);
  const current = await getContactChannel(trx, channel, tenant, contactId, id);
  const { is_primary: _isPrimary, ...fields } = patch;
  if (typeof fields.consented_at === 'string') fields.consented_at = new Date(fields.consented_at);
  const changes: Record<string, unknown> = changedFields<Record<string, unknown>>(current, fields);
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
  if (!hasChanges(changes)) return current;
  const record = await updateChannel(trx, channel, tenant, id, changes);
  subRecords.unshift({ type: channel.kind, action: 'updated', record });
  await touchContact(trx, tenant, before, after, subRecords);
  return record;
}

export async function deleteContactChannel(
  trx: Trx,
  channel: Channel,
  tenant: TenantScope,
  contactId: string,
  id: string,
): Promise<void> {
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
}

async function touchContact(
  trx: Trx,
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

/** Why the CRM forbids contacting a number: its owner opted out, or it must not be contacted at all. */
export type ContactBlock = 'opted_out' | 'do_not_contact';

export interface PhoneReach {
  /** The tenant's contact with this phone (archived ones included), or null when none has it. */
  contact: { id: string; full_name: string | null; archived: boolean } | null;
  /** Null when the number may be contacted now. */
  blocked: ContactBlock | null;
}

/**
 * Whether the tenant may call or text `phone` (E.164) at this moment, by the CRM's consent and
 * do-not-call state: the tenant's contact phone with `consent_status` `opt_out` is `opted_out`; with
 * `do_not_call`, or any phone row of the org with `dnc_scope` `global` for the number, it is
 * `do_not_contact`. Sending and dialing modules ask this at send or dial time, never earlier.
 */
export async function phoneReach(db: Executor, tenant: TenantScope, phone: string): Promise<PhoneReach> {
  const rows = await phoneStanding(db, tenant, phone);
  const own = rows.find((row) => row.client_id === tenant.clientId) ?? null;
  const globallyBlocked = rows.some((row) => row.dnc_scope === 'global');
  const blocked: ContactBlock | null =
    own?.consent_status === 'do_not_call' || globallyBlocked
      ? 'do_not_contact'
      : own?.consent_status === 'opt_out'
        ? 'opted_out'
        : null;
  return {
    contact: own && { id: own.contact_id, full_name: own.full_name, archived: own.archived_at !== null },
    blocked,
  };
}

/**
 * A carrier consent keyword from `phone` (an inbound `STOP` or `START`): the tenant's contact phone
 * with that number gets `consent_status` `opt_out` or `opt_in` (`consent_source` `sms_keyword`,
 * `consented_at` now), a `contact.updated` like any change of it. Returns the contact's id, or null
 * when no contact of the tenant has the number. A phone already in that state changes nothing.
 */
export async function applyPhoneConsentKeyword(
  trx: Trx,
  tenant: TenantScope,
  phone: string,
  consent: 'opt_in' | 'opt_out',
): Promise<string | null> {
  const record = await findChannelByValue(trx, PHONE, tenant, phone);
  if (!record) return null;
  if (record.consent_status !== consent) {
    await patchContactChannel(trx, PHONE, tenant, record.contact_id as string, record.id as string, {
      consent_status: consent,
      consent_source: 'sms_keyword',
      consented_at: new Date().toISOString(),
    });
  }
  return record.contact_id as string;
}
