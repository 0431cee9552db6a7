import { caller } from '../crm/crm-client.ts';
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
