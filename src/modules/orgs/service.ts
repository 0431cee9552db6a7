import { newId } from '../../platform/db/ids.ts';
import type { Executor, Trx } from '../../platform/db/pool.ts';
import { errors } from '../../platform/http/errors.ts';
import * as fuel from '../fuel/service.ts';
import * as store from './store.ts';

export function publicOrg(row: store.OrgRow) {
  return {
    id: row.id,
    name: row.name,
    house_client_id: row.house_client_id,
    features: { sdr_outbound: row.features.sdr_outbound === true },
    timezone: row.timezone,
  };
}

export async function createOrg(trx: Trx, input: { name: string }) {
  const row = await store.insertOrg(trx, { id: newId(), name: input.name, houseClientId: newId() });
  return publicOrg(row);
}

export async function getOrg(db: Executor, orgId: string) {
  const row = await store.findOrg(db, orgId);
  if (!row) throw errors.notFound('Org', orgId);
  return publicOrg(row);
}

export async function updateOrg(
  trx: Trx,
  orgId: string,
  input: { name?: string; features?: { sdr_outbound?: boolean }; timezone?: string | null },
) {
  const current = await store.findOrg(trx, orgId);
  if (!current) throw errors.notFound('Org', orgId);
  const features = input.features ? { ...current.features, ...input.features } : undefined;
  const timezone = input.timezone ? await ianaTimeZone(trx, input.timezone) : input.timezone;
  const row = await store.updateOrg(trx, orgId, { name: input.name, features, timezone });
  return publicOrg(row!);
}

/** An IANA time zone name exactly as written (`America/New_York`, `UTC`); 400 naming `timezone` otherwise. */
async function ianaTimeZone(db: Executor, name: string): Promise<string> {
  let known = name === 'UTC' || name.includes('/');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    known = false;
  }
  // PostgreSQL counts the days in it, so it must know the zone too.
  if (!known || !(await store.timeZoneKnown(db, name))) {
    throw errors.invalidField('timezone', 'must be an IANA time zone such as America/New_York or UTC');
  }
  return name;
}

export async function grantFuel(trx: Trx, orgId: string, input: { amount: number; reason?: string }) {
  const balance = await fuel.grantFuel(trx, orgId, { amount: input.amount, note: input.reason ?? null });
  return { fuel: { balance } };
}
