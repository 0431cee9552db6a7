import assert from 'node:assert/strict';
import type pg from 'pg';
import { type Call, caller } from '../crm/crm-client.ts';
import { ADMIN_TOKEN, adminCall, type TestApp, type TestTenant } from '../helpers.ts';

/** Turns the org's SDR outbound flag on and gives it a number (of its house client) to dial from. */
export async function enableSdr(t: TestApp, tenant: TestTenant, from: string): Promise<void> {
  await adminCall(t.app, 'PATCH', `/orgs/${tenant.orgId}`, { features: { sdr_outbound: true } });
  await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: from });
}

/** A contact of the client (the client key's), with a primary phone. */
export async function newContact(t: TestApp, tenant: TestTenant, phone: string, extra: object = {}) {
  const { status, body } = await caller(t, tenant.client)('POST', '/crm/contacts', {
    phone,
    full_name: `Prospect ${phone}`,
    ...extra,
  });
  if (status >= 300) throw new Error(`contact: ${status} ${JSON.stringify(body)}`);
  return body.contact.id as string;
}

/** Scripts what the voice simulator plays when `number` is called. */
export async function scriptNumber(t: TestApp, number: string, script: object): Promise<void> {
  const response = await t.app.inject({
    method: 'PUT',
    url: `/admin/v1/simulator/voice/numbers/${number}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: script,
  });
  if (response.statusCode >= 300) throw new Error(`script: ${response.statusCode} ${response.body}`);
}

/** A zone whose local time is now about `hour` o'clock (Etc/GMT zones: whole hours, no DST). */
export function zoneAtLocalHour(hour: number, now = new Date()): string {
  let offset = hour - now.getUTCHours();
  if (offset > 14) offset -= 24;
  if (offset < -12) offset += 24;
  if (offset === 0) return 'UTC';
  // Etc/GMT signs are inverted: Etc/GMT-3 is UTC+3.
  return offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
}

/**
 * Every prospect of `campaignIds` was dialed exactly once, for its first attempt: one call per
 * `sdr:<prospect>:1` cause key and one provider placement per call. Returns the prospects.
 */
export async function assertDialedOnceEach(pool: pg.Pool, campaignIds: string[], expected: number) {
  const { rows: calls } = await pool.query<{ cause_key: string; placements: number }>(
    `SELECT c.cause_key, (SELECT count(*)::int FROM voice_placements p WHERE p.call_id = c.id) AS placements
     FROM calls c WHERE c.sdr_campaign_id = ANY($1::uuid[])`,
    [campaignIds],
  );
  const { rows: prospects } = await pool.query<{ id: string; attempts: number; calls: number }>(
    `SELECT id, attempts, cardinality(call_ids) AS calls FROM sdr_prospects WHERE campaign_id = ANY($1::uuid[])`,
    [campaignIds],
  );
  assert.equal(prospects.length, expected);
  assert.deepEqual(
    calls.map((call) => call.cause_key).sort(),
    prospects.map((prospect) => `sdr:${prospect.id}:1`).sort(),
    'one call per prospect, its first attempt',
  );
  assert.deepEqual(
    calls.filter((call) => call.placements !== 1),
    [],
    'each call placed with the provider once',
  );
  for (const prospect of prospects) assert.deepEqual([prospect.attempts, prospect.calls], [1, 1]);
}

/**
 * A campaign of one attempt per prospect, calling 10:00-14:00 every day, scheduled an hour out so that
 * nothing dials it until the test moves its start (`startNow`); its prospects are at local noon.
 */
export async function scheduledCampaign(
  agency: Call,
  from: string,
  name: string,
  contactIds: string[],
): Promise<string> {
  const created = await agency('POST', '/sdr/campaigns', {
    name,
    from_number: from,
    max_concurrent_calls: contactIds.length,
    max_attempts: 1,
    calling_window_start: '10:00',
    calling_window_end: '14:00',
    calling_days: [1, 2, 3, 4, 5, 6, 7],
    scheduled_start_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.campaign.id as string;
  const added = await agency('POST', `/sdr/campaigns/${id}/prospects`, {
    prospects: contactIds.map((contact_id) => ({ contact_id, timezone: zoneAtLocalHour(12) })),
  });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  return id;
}

/** Makes scheduled campaigns due now: the next dialer tick of any worker activates and dials them. */
export async function startNow(pool: pg.Pool, campaignIds: string[]): Promise<void> {
  await pool.query('UPDATE sdr_campaigns SET scheduled_start_at = now() WHERE id = ANY($1::uuid[])', [
    campaignIds,
  ]);
}
