/**
 * A webhook's delivery log is the tenant's to read: it names the host of the URL they gave, never
 * the address that host resolved to inside the service's network (issue 17). The dispatcher here is
 * the real one, with a DNS answer the test controls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.ts';
import { OutboundClient } from '../../src/platform/outbound/client.ts';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';

describe('the webhook delivery log and resolved addresses', () => {
  let t: TestApp;
  let tenant: TestTenant;
  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  const deliverOnce = async (allowPrivate: boolean, address: string) => {
    const client = new OutboundClient({
      allowPrivate,
      timeoutMs: 1000,
      userAgent: 'test',
      resolve: (_host, _options, callback) =>
        callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]),
    });
    const dispatcher = new WebhookDispatcher({
      db: t.platform.db,
      config: t.config,
      encryptionKey: t.platform.secrets.encryptionKey,
      client,
      log: t.platform.log,
    });
    await dispatcher.run();
    await client.close();
  };

  test('a refused internal address and a refused connection are logged without the address', async () => {
    const call = caller(t, tenant.client);
    for (const [allowPrivate, address] of [
      [false, '10.20.30.40'],
      [true, '127.0.0.1'],
    ] as const) {
      const hook = await call('POST', '/webhooks', {
        url: 'https://hooks.customer.example:1/in',
        events: ['webhook.test'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      const id = hook.body.webhook.id;
      const sent = await call('POST', `/webhooks/${id}/test`);
      assert.equal(sent.status, 202);
      // The fan-out is the relay's work; the delivery it would write is written here, due now.
      await t.database.pool.query(
        `INSERT INTO webhook_deliveries (id, org_id, subscription_id, event_id, event_type, event_created_at, status, next_attempt_at)
         SELECT gen_random_uuid(), org_id, $1, id, type, created_at, 'pending', now() FROM events WHERE id = $2`,
        [id, sent.body.event.id],
      );
      await deliverOnce(allowPrivate, address);

      const log = await call('GET', `/webhooks/${id}/deliveries`);
      assert.equal(log.status, 200);
      assert.equal(log.body.data.length, 1, JSON.stringify(log.body));
      const [attempt] = log.body.data;
      assert.equal(attempt.error_class, allowPrivate ? 'network_error' : 'blocked_address');
      assert.ok(attempt.error.length > 0);
      assert.ok(!JSON.stringify(log.body).includes(address), JSON.stringify(attempt));
      const stored = await t.database.pool.query(
        `SELECT error, response_body FROM webhook_delivery_attempts WHERE subscription_id = $1`,
        [id],
      );
      assert.ok(!JSON.stringify(stored.rows).includes(address));
    }
  });
});
