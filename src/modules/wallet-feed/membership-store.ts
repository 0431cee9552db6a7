import { sql } from 'kysely';
import type { Executor, Trx } from '../../platform/db/pool.ts';

export type AddressRole = 'custodial' | 'connected' | 'platform' | 'marketplace';

export interface FeedMembersTable {
  id: string;
  member_since: string;
  created_at: Date;
  updated_at: Date;
}

export interface FeedAddressesTable {
  address: string;
  role: AddressRole;
  member_id: string | null;
  position: number;
}

declare module '../../platform/db/schema.ts' {
  interface Database {
    feed_members: FeedMembersTable;
    feed_addresses: FeedAddressesTable;
  }
}

export interface MemberRecord {
  id: string;
  memberSince: string;
  custodial: string[];
  connected: string[];
}

/** Addresses among `addresses` that belong to someone other than the members in `memberIds`. */
export async function findForeignAddresses(
  db: Executor,
  addresses: string[],
  memberIds: string[],
): Promise<Array<{ address: string; role: AddressRole; member_id: string | null }>> {
  if (addresses.length === 0) return [];
  const { rows } = await sql<{ address: string; role: AddressRole; member_id: string | null }>`
    SELECT address, role, member_id FROM feed_addresses
    WHERE address = ANY(${addresses}::text[])
      AND (member_id IS NULL OR NOT (member_id = ANY(${memberIds}::text[])))
    ORDER BY address`.execute(db);
  return rows;
}

/** Inserts or replaces members with their wallets; returns the ids that did not exist before. */
export async function upsertMembers(trx: Trx, members: MemberRecord[]): Promise<Set<string>> {
  if (members.length === 0) return new Set();
  const ids = members.map((m) => m.id);
  const { rows } = await sql<{ id: string; created: boolean }>`
    INSERT INTO feed_members AS m (id, member_since)
    SELECT * FROM unnest(${ids}::text[], ${members.map((m) => m.memberSince)}::date[])
    ON CONFLICT (id) DO UPDATE SET member_since = excluded.member_since, updated_at = now()
    RETURNING id, (xmax = 0) AS created`.execute(trx);
  await sql`DELETE FROM feed_addresses WHERE member_id = ANY(${ids}::text[])`.execute(trx);
  const address: string[] = [];
  const role: string[] = [];
  const memberId: string[] = [];
  const position: number[] = [];
  for (const member of members) {
    for (const [kind, list] of [
      ['custodial', member.custodial],
      ['connected', member.connected],
    ] as const) {
      list.forEach((wallet, i) => {
        address.push(wallet);
        role.push(kind);
        memberId.push(member.id);
        position.push(i);
      });
    }
  }
  await sql`
    INSERT INTO feed_addresses (address, role, member_id, position)
    SELECT * FROM unnest(${address}::text[], ${role}::text[], ${memberId}::text[], ${position}::int[])`.execute(
    trx,
  );
  return new Set(rows.filter((row) => row.created).map((row) => row.id));
}

export async function deleteMember(trx: Trx, id: string): Promise<boolean> {
  const result = await trx.deleteFrom('feed_members').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Replaces every address of a role the platform holds itself (its wallets, or the marketplaces). */
export async function replaceRoleAddresses(
  trx: Trx,
  role: 'platform' | 'marketplace',
  addresses: string[],
): Promise<void> {
  await trx.deleteFrom('feed_addresses').where('role', '=', role).execute();
  if (addresses.length === 0) return;
  await trx
    .insertInto('feed_addresses')
    .values(addresses.map((address, position) => ({ address, role, member_id: null, position })))
    .execute();
}

/** Takes the lock that serializes membership writes, so concurrent imports cannot both claim an address. */
export async function lockMembership(trx: Trx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('feed_membership'))`.execute(trx);
}

/** Membership as the snapshot reads it: members with their wallets in order, and the role lists. */
export async function readMembership(db: Executor): Promise<{
  members: MemberRecord[];
  platformWallets: string[];
  marketplaces: string[];
}> {
  // Unordered reads (sorting 150,000 addresses in SQL costs more than placing them here).
  const members = await sql<{ id: string; member_since: string }>`
    SELECT id, to_char(member_since, 'YYYY-MM-DD') AS member_since FROM feed_members ORDER BY id`.execute(db);
  const addresses = await sql<{
    address: string;
    role: AddressRole;
    member_id: string | null;
    position: number;
  }>`
    SELECT address, role, member_id, position FROM feed_addresses`.execute(db);
  const byId = new Map<string, MemberRecord>();
  const records: MemberRecord[] = new Array(members.rows.length);
  members.rows.forEach((row, i) => {
    records[i] = { id: row.id, memberSince: row.member_since, custodial: [], connected: [] };
    byId.set(row.id, records[i]);
  });
  const platform: Array<[number, string]> = [];
  const marketplaces: Array<[number, string]> = [];
  for (const row of addresses.rows) {
    if (row.role === 'platform') platform.push([row.position, row.address]);
    else if (row.role === 'marketplace') marketplaces.push([row.position, row.address]);
    else {
      const list = byId.get(row.member_id!)?.[row.role];
      if (list) list[row.position] = row.address;
    }
  }
  const inOrder = (list: Array<[number, string]>) =>
    list.sort((a, b) => a[0] - b[0]).map(([, address]) => address);
  return { members: records, platformWallets: inOrder(platform), marketplaces: inOrder(marketplaces) };
}
