import type { TenantScope } from '../../platform/auth/tenant.ts';
import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import type { PageRequest } from '../../platform/http/pagination.ts';
import { assertReferences } from '../../platform/http/references.ts';
import { AGENT } from '../agents/service.ts';
import { getClient } from '../clients/service.ts';
import { normalizePhone } from '../contacts/service.ts';
import { getOrg } from '../orgs/service.ts';
import * as store from './store.ts';

/**
 * Phone numbers: each E.164 number belongs to one org and one of its clients (the house client by
 * default), and no two orgs hold the same number, so an inbound message is routed by its `to` alone.
 * Operators add and remove numbers through the admin API; tenants read theirs.
 */

export type PhoneNumberRow = store.PhoneNumberRow;
export type PhoneNumber = ReturnType<typeof publicNumber>;

export function publicNumber(row: PhoneNumberRow) {
  return {
    id: row.id,
    number: row.number,
    org_id: row.org_id,
    client_id: row.client_id,
    label: row.label,
    agent_id: row.agent_id,
    created_at: row.created_at,
  };
}

export interface NewNumber {
  number: string;
  client_id?: string;
  label?: string;
  agent_id?: string;
}

/**
 * `POST /admin/v1/orgs/{orgId}/numbers`: 400 for a number that is not valid or an `agent_id` that is
 * not an agent of the number's client, 404 for an unknown org or a client of another org, 409
 * `number_taken` when any org holds the number.
 */
export async function createNumber(
  trx: Trx,
  orgId: string,
  input: NewNumber,
  defaultCountry: string,
): Promise<PhoneNumber> {
  const number = normalizePhone(input.number, defaultCountry, 'number');
  const org = await getOrg(trx, orgId);
  const clientId = input.client_id ?? org.house_client_id;
  if (input.client_id !== undefined) await getClient(trx, orgId, input.client_id);
  await assertReferences(trx, { orgId, clientId }, [{ field: 'agent_id', id: input.agent_id, kind: AGENT }]);
  const row = await store.insertNumberUnlessTaken(trx, {
    id: newId(),
    org_id: orgId,
    client_id: clientId,
    number,
    label: input.label ?? null,
    agent_id: input.agent_id ?? null,
  });
  if (!row) throw errors.numberTaken(number);
  return publicNumber(row);
}

/** `DELETE /admin/v1/numbers/{numberId}`: 404 when there is no such number. */
export async function deleteNumber(trx: Trx, numberId: string): Promise<void> {
  if (!(await store.deleteNumber(trx, numberId))) throw errors.notFound('Phone number', numberId);
}

/** `GET /admin/v1/orgs/{orgId}/numbers`: every client's numbers, oldest first. */
export async function listOrgNumbers(db: Executor, orgId: string, page: PageRequest<string>) {
  await getOrg(db, orgId);
  return (await store.listNumbers(db, { orgId, clientId: null }, page)).map(publicNumber);
}

/** `GET /v1/numbers`: the caller's client's numbers (the house client's for an agency key acting as itself). */
export async function listNumbers(db: Executor, tenant: TenantScope, page: PageRequest<string>) {
  return (await store.listNumbers(db, tenant, page)).map(publicNumber);
}

export async function getNumber(db: Executor, tenant: TenantScope, id: string): Promise<PhoneNumber> {
  const row = await store.findNumber(db, tenant, id);
  if (!row) throw errors.notFound('Phone number', id);
  return publicNumber(row);
}

export interface NumberOwner {
  id: string;
  org_id: string;
  client_id: string;
  number: string;
  agent_id: string | null;
}

/** Who holds an E.164 number, and which agent answers it, for routing inbound traffic; null when no org does. */
export async function numberOwner(db: Executor, e164: string): Promise<NumberOwner | null> {
  const row = await store.findByNumber(db, e164);
  return row
    ? { id: row.id, org_id: row.org_id, client_id: row.client_id, number: row.number, agent_id: row.agent_id }
    : null;
}

/**
 * The number a message of this tenant is sent from. A given `from` must be one of the client's own
 * numbers (400 `validation_error` on `from` otherwise); without it, the client's first number, else
 * the house client's first; with neither, 422 `no_sender_number` naming the admin call that adds one.
 */
export async function chooseSender(
  db: Executor,
  tenant: TenantScope,
  from: string | undefined,
  defaultCountry: string,
): Promise<PhoneNumber> {
  if (from !== undefined) {
    const row = await store.findClientNumber(db, tenant, normalizePhone(from, defaultCountry, 'from'));
    if (!row) {
      throw errors.invalidField('from', "is not one of this client's phone numbers (see GET /v1/numbers)");
    }
    return publicNumber(row);
  }
  const own = await store.findFirstNumber(db, tenant);
  if (own) return publicNumber(own);
  const { house_client_id } = await getOrg(db, tenant.orgId);
  const house =
    house_client_id === tenant.clientId
      ? undefined
      : await store.findFirstNumber(db, { orgId: tenant.orgId, clientId: house_client_id });
  if (house) return publicNumber(house);
  throw errors.noSenderNumber(tenant.orgId, tenant.clientId);
}
