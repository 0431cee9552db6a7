import { isAddress } from 'viem/utils';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors, type FieldError } from '../../platform/http/errors.ts';
import * as store from './membership-store.ts';

export interface MemberInput {
  member_since: string;
  custodial_wallets: string[];
  connected_wallets: string[];
}

export interface PublicMember {
  id: string;
  member_since: string;
  custodial_wallets: string[];
  connected_wallets: string[];
}

/**
 * Lower-cases each address after checking it: the schema has already checked the length and hex
 * digits; here a mixed-case address must carry a valid EIP-55 checksum (viem `isAddress`).
 */
function normalizeAddresses(
  addresses: string[],
  field: string,
  problems: FieldError[],
  seen: Map<string, string>,
): string[] {
  return addresses.map((value, i) => {
    const where = `${field}.${i}`;
    if (!isAddress(value)) problems.push({ field: where, message: 'has an invalid EIP-55 checksum' });
    const address = value.toLowerCase();
    const first = seen.get(address);
    if (first) problems.push({ field: where, message: `repeats ${first}` });
    else seen.set(address, where);
    return address;
  });
}

function toRecord(
  id: string,
  input: MemberInput,
  prefix: string,
  problems: FieldError[],
): store.MemberRecord {
  const seen = new Map<string, string>();
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  return {
    id,
    memberSince: input.member_since,
    custodial: normalizeAddresses(input.custodial_wallets, at('custodial_wallets'), problems, seen),
    connected: normalizeAddresses(input.connected_wallets, at('connected_wallets'), problems, seen),
  };
}

function publicMember(record: store.MemberRecord): PublicMember {
  return {
    id: record.id,
    member_since: record.memberSince,
    custodial_wallets: record.custodial,
    connected_wallets: record.connected,
  };
}

/** 409 when an address of `records` already belongs to another member, the platform or a marketplace. */
async function assertAddressesFree(db: Executor, records: store.MemberRecord[]): Promise<void> {
  const owner = new Map<string, string>();
  for (const record of records) {
    for (const address of [...record.custodial, ...record.connected]) {
      const other = owner.get(address);
      if (other && other !== record.id) {
        throw errors.conflict(
          'address_in_use',
          `Address ${address} is given to both ${other} and ${record.id}.`,
          {
            address,
            member_ids: [other, record.id],
          },
        );
      }
      owner.set(address, record.id);
    }
  }
  const taken = await store.findForeignAddresses(
    db,
    [...owner.keys()],
    records.map((r) => r.id),
  );
  if (taken.length > 0) throw addressInUse(taken[0]);
}

function addressInUse(taken: { address: string; role: store.AddressRole; member_id: string | null }) {
  const holder = taken.member_id ? `member ${taken.member_id}` : `the ${taken.role} addresses`;
  return errors.conflict('address_in_use', `Address ${taken.address} already belongs to ${holder}.`, {
    address: taken.address,
    role: taken.role,
    ...(taken.member_id ? { member_id: taken.member_id } : {}),
  });
}

/** Creates or replaces a member with exactly the given wallets. */
export async function putMember(
  trx: Trx,
  id: string,
  input: MemberInput,
): Promise<{ member: PublicMember; created: boolean }> {
  const problems: FieldError[] = [];
  const record = toRecord(id, input, '', problems);
  if (problems.length) throw errors.validation(problems);
  await store.lockMembership(trx);
  await assertAddressesFree(trx, [record]);
  const created = await store.upsertMembers(trx, [record]);
  return { member: publicMember(record), created: created.has(id) };
}

export async function removeMember(trx: Trx, id: string): Promise<void> {
  await store.lockMembership(trx);
  if (!(await store.deleteMember(trx, id))) throw errors.notFound('Member', id);
}

/** Creates or replaces many members in one transaction: all of them, or none when one is refused. */
export async function importMembers(
  trx: Trx,
  members: Array<MemberInput & { id: string }>,
): Promise<{ imported: number; created: number; updated: number }> {
  const problems: FieldError[] = [];
  const firstIndex = new Map<string, number>();
  const records = members.map((member, i) => {
    const earlier = firstIndex.get(member.id);
    if (earlier !== undefined) problems.push({ field: `${i}.id`, message: `repeats item ${earlier}` });
    else firstIndex.set(member.id, i);
    return toRecord(member.id, member, String(i), problems);
  });
  if (problems.length) throw errors.validation(problems.slice(0, 100));
  await store.lockMembership(trx);
  await assertAddressesFree(trx, records);
  const created = await store.upsertMembers(trx, records);
  return { imported: records.length, created: created.size, updated: records.length - created.size };
}

/** Replaces the platform's own wallets (or the marketplace addresses) with exactly `addresses`. */
export async function replaceRole(
  trx: Trx,
  role: 'platform' | 'marketplace',
  addresses: string[],
  field: string,
): Promise<string[]> {
  const problems: FieldError[] = [];
  const normalized = normalizeAddresses(addresses, field, problems, new Map());
  if (problems.length) throw errors.validation(problems);
  await store.lockMembership(trx);
  const taken = (await store.findForeignAddresses(trx, normalized, [])).filter((row) => row.role !== role);
  if (taken.length > 0) throw addressInUse(taken[0]);
  await store.replaceRoleAddresses(trx, role, normalized);
  return normalized;
}
