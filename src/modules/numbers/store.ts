import type { Generated, Insertable, Selectable } from 'kysely';
import type { TenantScope } from '../../platform/auth/tenant.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { prepare } from '../../platform/db/prepared.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';

declare module '../../platform/db/schema.ts' {
  interface Database {
    phone_numbers: PhoneNumbersTable;
  }
}

export interface PhoneNumbersTable {
  id: string;
  org_id: string;
  client_id: string;
  /** E.164; unique across all orgs. */
  number: string;
  label: string | null;
  /** The agent that answers calls to the number: one of its client's. */
  agent_id: string | null;
  created_at: Generated<Date>;
}

export type PhoneNumberRow = Selectable<PhoneNumbersTable>;

/** Inserts the number, or returns undefined when any org holds it already. */
export function insertNumberUnlessTaken(trx: Trx, row: Insertable<PhoneNumbersTable>) {
  return trx
    .insertInto('phone_numbers')
    .values(row)
    .onConflict((conflict) => conflict.column('number').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function deleteNumber(trx: Trx, id: string) {
  return trx.deleteFrom('phone_numbers').where('id', '=', id).returning('id').executeTakeFirst();
}

/** The number's holder, whichever org it is: inbound traffic is routed by the number alone. */
const byNumber = prepare((db, p: { number: string }) =>
  db.selectFrom('phone_numbers').selectAll().where('number', '=', p.number),
);

export async function findByNumber(db: Executor, number: string) {
  const [row] = await byNumber.run(db, { number });
  return row;
}

function numbersOf(db: Executor, tenant: TenantScope) {
  return db
    .selectFrom('phone_numbers')
    .selectAll()
    .where('org_id', '=', tenant.orgId)
    .where('client_id', '=', tenant.clientId);
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
