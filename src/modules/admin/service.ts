import { sql } from 'kysely';
import { generateKey, publicApiKey } from '../../platform/auth/keys.ts';
import { KEYS_CHANNEL } from '../../platform/context.ts';
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

export function publicClient(row: store.ClientRow) {
  return { id: row.id, org_id: row.org_id, name: row.name };
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

export async function getClient(db: Executor, orgId: string, clientId: string) {
  const row = await store.findClient(db, orgId, clientId);
  if (!row) throw errors.notFound('Client', clientId);
  return publicClient(row);
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

export async function createClient(trx: Trx, orgId: string, input: { name: string }) {
  if (!(await store.findOrg(trx, orgId))) throw errors.notFound('Org', orgId);
  return publicClient(await store.insertClient(trx, { id: newId(), orgId, name: input.name }));
}

export interface MintKeyInput {
  name: string;
  kind: 'agency' | 'client' | 'legacy_sms';
  client_id?: string;
  rate_limit_per_minute?: number;
  expires_at?: string;
  tag?: string;
}

/** Mints a key; the cleartext is in this answer only. */
export async function mintKey(trx: Trx, orgId: string, input: MintKeyInput) {
  if (!(await store.findOrg(trx, orgId))) throw errors.notFound('Org', orgId);
  if (input.kind === 'client') {
    if (!input.client_id) throw errors.invalidField('client_id', 'is required for a client key');
    if (!(await store.findClient(trx, orgId, input.client_id)))
      throw errors.notFound('Client', input.client_id);
  } else if (input.client_id !== undefined) {
    throw errors.invalidField('client_id', `is only accepted for client keys, not ${input.kind} keys`);
  }
  if (input.expires_at !== undefined && Date.parse(input.expires_at) <= Date.now()) {
    throw errors.invalidField('expires_at', 'must be in the future');
  }
  const secret = generateKey(input.kind);
  const row = await store.insertApiKey(trx, {
    id: newId(),
    orgId,
    clientId: input.kind === 'client' ? input.client_id! : null,
    name: input.name,
    kind: input.kind,
    prefix: secret.prefix,
    last4: secret.last4,
    hash: secret.hash,
    rateLimitPerMinute: input.rate_limit_per_minute ?? 60,
    expiresAt: input.expires_at ?? null,
    tag: input.tag ?? null,
  });
  return { api_key: publicApiKey(row), key: secret.cleartext };
}

/** Revokes a key; every API process drops it from its cache through NOTIFY, so it is refused at once. */
export async function revokeKey(trx: Trx, keyId: string): Promise<void> {
  const key = await store.findApiKey(trx, keyId);
  if (!key) throw errors.notFound('API key', keyId);
  await store.revokeApiKey(trx, keyId);
  await sql`SELECT pg_notify(${KEYS_CHANNEL}, ${keyId})`.execute(trx);
}

export async function grantFuel(trx: Trx, orgId: string, input: { amount: number; reason?: string }) {
  const balance = await fuel.grantFuel(trx, orgId, { amount: input.amount, note: input.reason ?? null });
  return { fuel: { balance } };
}
