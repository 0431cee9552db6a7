import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AgencyPlatform,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../../sdk/src/index.ts';
import { eventually } from '../helpers.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../webhooks/receiver.ts';
import { type SdkService, startService } from './service.ts';

describe('verifyWebhook on a real delivery from the service', () => {
  let service: SdkService;
  let receiver: Receiver;
  let delivery: ReceivedRequest;
  let secret: string;

  before(async () => {
    service = await startService({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    await service.t.startWorker();
    receiver = await startReceiver();
    const client = new AgencyPlatform({ apiKey: service.tenant.agencyKey, baseUrl: service.baseUrl });
    const created = await client.webhooks.create({
      url: `${receiver.url}/hooks`,
      events: ['contact.created'],
    });
    secret = created.secret;
    assert.equal(created.signing_header, 'X-Service-Signature');
    await client.crm.contacts.create({ email: 'signed@example.com' });
    delivery = await eventually(async () => receiver.requests[0], 30_000);
  });
  after(async () => {
    await receiver.close();
    await service.close();
  });

  const verify = (overrides: Partial<Parameters<typeof verifyWebhook>[0]> = {}) =>
    verifyWebhook({ payload: delivery.raw, headers: delivery.headers, secret, ...overrides });

  test('accepts the delivery and returns the typed event', async () => {
    const event: WebhookEvent = await verify();
    assert.equal(event.type, 'contact.created');
    assert.match(event.id, /^evt_/);
    assert.equal(event.id, delivery.headers['x-service-event-id']);
    if (event.type === 'contact.created') assert.equal(event.data.email, 'signed@example.com');
    // The raw text and a Fetch Headers work as well as bytes and Node's header object.
    const headers = new Headers(Object.entries(delivery.headers) as [string, string][]);
    assert.equal(
      (await verifyWebhook({ payload: delivery.raw.toString('utf8'), headers, secret })).id,
      event.id,
    );
  });

  test('rejects a changed byte', async () => {
    const changed = Buffer.from(delivery.raw);
    changed[changed.length - 2] = (changed[changed.length - 2] ?? 0) ^ 1;
    await assert.rejects(verify({ payload: changed }), WebhookVerificationError);
    await assert.rejects(
      verify({ payload: JSON.stringify(JSON.parse(delivery.raw.toString('utf8')), null, 1) }),
      WebhookVerificationError,
      're-serialised JSON is not the signed body',
    );
  });

  test('rejects a wrong secret', async () => {
    await assert.rejects(verify({ secret: `${secret.slice(0, -1)}x` }), WebhookVerificationError);
  });

  test('rejects a timestamp 6 minutes old, and accepts one within the 5-minute tolerance', async () => {
    const signedAt = Number(delivery.headers['x-service-timestamp']) * 1000;
    await assert.rejects(verify({ now: signedAt + 6 * 60_000 }), /tolerance 300 s/);
    await assert.rejects(verify({ now: signedAt - 6 * 60_000 }), WebhookVerificationError);
    assert.equal((await verify({ now: signedAt + 4 * 60_000 })).type, 'contact.created');
  });

  test('rejects a delivery without its signature headers', async () => {
    const { 'x-service-signature': _, ...unsigned } = delivery.headers;
    await assert.rejects(verify({ headers: unsigned }), /Missing X-Service-Signature/);
  });
});
