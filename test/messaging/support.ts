import pino from 'pino';
import { statusCallbackUrl } from '../../src/modules/messaging/provider.ts';
import { reportLoop, type SenderContext, sendLoop } from '../../src/modules/messaging/sender.ts';
import type { OutboundSms, SmsProvider } from '../../src/providers/sms/index.ts';
import { caller } from '../crm/crm-client.ts';
import { adminCall, type TestApp, type TestTenant } from '../helpers.ts';

/** The provider of the test app, wrapped to record every send it is asked for. */
export function countingProvider(t: TestApp): SmsProvider & { sends: OutboundSms[] } {
  const inner = t.platform.providers.sms;
  const sends: OutboundSms[] = [];
  return {
    name: inner.name,
    sends,
    send: (message) => {
      sends.push(message);
      return inner.send(message);
    },
    parseInbound: (request) => inner.parseInbound(request),
    parseStatus: (request) => inner.parseStatus(request),
  };
}

export function senderContext(t: TestApp, provider: SmsProvider, overrides: Partial<SenderContext> = {}) {
  return {
    db: t.platform.db,
    provider,
    leaseMs: t.config.smsSendLeaseMs,
    batch: t.config.smsSendBatch,
    pollMs: t.config.smsSendPollMs,
    statusCallbackUrl: statusCallbackUrl(t.platform, provider),
    log: pino({ level: 'silent' }),
    ...overrides,
  } satisfies SenderContext;
}

/** Runs the send loop until nothing is due. */
export async function drainSends(context: SenderContext): Promise<void> {
  const loop = sendLoop(context);
  while (await loop.run()) {}
}

export async function drainReports(context: SenderContext): Promise<void> {
  const loop = reportLoop(context);
  while (await loop.run()) {}
}

/** Gives the tenant's client a number and the org some FUEL. */
export async function smsSetup(t: TestApp, tenant: TestTenant, number: string, fuel: number) {
  await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number, client_id: tenant.clientId });
  if (fuel > 0) await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: fuel });
  return caller(t, tenant.client);
}

export async function balanceOf(t: TestApp, tenant: TestTenant): Promise<number> {
  const { body } = await caller(t, tenant.client)('GET', '/fuel');
  return body.fuel.balance;
}

export function simulateInbound(t: TestApp, payload: { from: string; to: string; body: string }) {
  return t.app.inject({
    method: 'POST',
    url: '/admin/v1/simulator/sms/inbound',
    headers: { authorization: 'Bearer test-admin-token' },
    payload,
  });
}
