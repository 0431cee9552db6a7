import type { Generated, Insertable, Selectable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import { whereTenant } from '../../platform/db/tenant-rows.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    phone_numbers: PhoneNumbersTable;
    phone_number_holders: PhoneNumberHoldersTable;
  }
}

export interface PhoneNumbersTable {
  id: string;
  org_id: string;
  client_id: string;
  /** E.164; unique across all orgs (through `phone_number_holders`). */
  number: string;
  label: string | null;
  /** The agent that answers calls to the number: one of its client's. */
  agent_id: string | null;
  created_at: Generated<Date>;
}

/** A local table of the coordinator: which org holds a number, for traffic that names a number and no tenant. */
export interface PhoneNumberHoldersTable {
  number: string;
  org_id: string;
  phone_number_id: string;
}

export type PhoneNumberRow = Selectable<PhoneNumbersTable>;

/** Inserts the number, or returns undefined when any org holds it already. */
export async function insertNumberUnlessTaken(trx: Trx, row: Insertable<PhoneNumbersTable> & { id: string }) {
  const held = await trx
    .insertInto('phone_number_holders')
    .values({ number: row.number, org_id: row.org_id, phone_number_id: row.id })
    .onConflict((conflict) => conflict.column('number').doNothing())
    .returning('number')
    .executeTakeFirst();
  if (!held) return undefined;
  return trx.insertInto('phone_numbers').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Deletes the number and frees it for any org; undefined when there is no such number. */
export async function deleteNumber(trx: Trx, id: string) {
  const row = await trx
    .deleteFrom('phone_numbers')
    .where('id', '=', id)
    .returning(['id', 'number'])
    .executeTakeFirst();
  if (row) await trx.deleteFrom('phone_number_holders').where('number', '=', row.number).execute();
  return row;
}

/** The number's holder, whichever org it is: inbound traffic is routed by the number alone. */
const byNumber = prepare((db, p: { number: string }) =>
  db
    .selectFrom('phone_number_holders as h')
    .innerJoin('phone_numbers as n', (join) =>
      join.onRef('n.org_id', '=', 'h.org_id').onRef('n.id', '=', 'h.phone_number_id'),
    )
    .selectAll('n')
    .where('h.number', '=', p.number),
);

export async function findByNumber(db: Executor, number: string) {
  const [row] = await byNumber.run(db, { number });
  return row;
}

function numbersOf(db: Executor, tenant: TenantScope) {
  return db.selectFrom('phone_numbers').selectAll().$call(whereTenant(tenant));
}

export function findNumber(db: Executor, tenant: TenantScope, id: string) {
  return numbersOf(db, tenant).where('id', '=', id).executeTakeFirst();
}

/** The client's first number (the oldest), the default sender. */
const firstNumber = prepare((db, p: TenantScope) => numbersOf(db, p).orderBy('id').limit(1));

export async function findFirstNumber(db: Executor, tenant: TenantScope) {
  const [row] = await firstNumber.run(db, { orgId: tenant.orgId, clientId: tenant.clientId });
  return row;
}

const clientNumber = prepare((db, p: TenantScope & { number: string }) =>
  numbersOf(db, p).where('number', '=', p.number),
);

export async function findClientNumber(db: Executor, tenant: TenantScope, number: string) {
  const [row] = await clientNumber.run(db, { orgId: tenant.orgId, clientId: tenant.clientId, number });
  return row;
}

/** A page of numbers, oldest first: one client's, or the whole org's when `clientId` is null. */
export function listNumbers(
  db: Executor,
  scope: { orgId: string; clientId: string | null },
  page: PageRequest<string>,
) {
  let query = db.selectFrom('phone_numbers').selectAll().where('org_id', '=', scope.orgId);
  if (scope.clientId !== null) query = query.where('client_id', '=', scope.clientId);
  if (page.after !== undefined) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit).execute();
}
