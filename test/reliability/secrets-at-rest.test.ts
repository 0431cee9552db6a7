/**
 * Keys and webhook signing secrets at rest (issue 17): after every way they are made (API keys of
 * each kind, webhook creation and rotation, with and without Idempotency-Key, replays included),
 * every row of every table of the database (the job queue's too) is read, and none holds a secret in
 * clear text, base64 or as the hex of a bytea.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  ENCRYPTION_KEY,
  type TestApp,
} from '../helpers.ts';

describe('no secret in clear at rest', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('every table, every row: no API key, no webhook secret, no ENCRYPTION_KEY', async () => {
    const secrets: string[] = [ENCRYPTION_KEY, ADMIN_TOKEN];
    const tenant = await createTenant(t.app);
    secrets.push(tenant.agencyKey, tenant.clientKey);
    const legacy = await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'sms',
      kind: 'legacy_sms',
    });
    secrets.push(legacy.key);

    for (const [headers, idempotent] of [
      [tenant.agency, false],
      [tenant.client, true],
      [tenant.agencyAsClient, true],
    ] as const) {
      const call = caller(t, headers);
      const extra: Record<string, string> = idempotent ? { 'idempotency-key': `k-${secrets.length}` } : {};
      const created = await call(
        'POST',
        '/webhooks',
        { url: 'https://example.com/in', events: ['*'] },
        extra,
      );
      assert.equal(created.status, 201);
      secrets.push(created.body.secret);
      if (idempotent) {
        const replay = await call(
          'POST',
          '/webhooks',
          { url: 'https://example.com/in', events: ['*'] },
          extra,
        );
        assert.equal(replay.body.secret, created.body.secret);
      }
      const rotated = await call('PATCH', `/webhooks/${created.body.webhook.id}`, { rotate_secret: true });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.match(rotated.body.secret, /^whsec_/);
      secrets.push(rotated.body.secret);
      // Events that carry the webhook (a test event) and calls that use the key.
      await call('POST', `/webhooks/${created.body.webhook.id}/test`);
      await call('GET', '/me');
    }

    const needles = new Set<string>();
    for (const secret of secrets) {
      const body = secret.replace(/^(gc_live_|cl_live_|sms_live_|whsec_)/, '');
      for (const form of [secret, body]) {
        needles.add(form);
        needles.add(Buffer.from(form).toString('hex'));
        needles.add(Buffer.from(form).toString('base64').replace(/=+$/, ''));
      }
    }
    const { rows: tables } = await t.database.pool.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
       WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    assert.ok(tables.length > 20, `${tables.length} tables`);
    const found: string[] = [];
    let rowsRead = 0;
    for (const { schema, name } of tables) {
      const { rows } = await t.database.pool.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM "${schema}"."${name}" t`,
      );
      rowsRead += rows.length;
      for (const { row } of rows) {
        const text = row.toLowerCase();
        for (const needle of needles)
          if (text.includes(needle.toLowerCase())) found.push(`${schema}.${name}: ${needle.slice(0, 12)}…`);
      }
    }
    assert.ok(rowsRead > 20, `${rowsRead} rows read`);
    assert.deepEqual(found, []);
  });
});
