import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Call, caller } from '../crm/crm-client.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { enableSdr } from '../sdr/support.ts';
import { newContact, newSequence } from '../sequences/support.ts';

const SMS_FROM = '+14155550430';
const SDR_FROM = '+14155550431';
const LIMIT = 16 * 1024;

/** An object whose JSON text is exactly `bytes` long. */
function metadataOf(bytes: number): Record<string, unknown> {
  return { note: 'x'.repeat(bytes - '{"note":""}'.length) };
}

describe('metadata: one rule wherever an action takes it', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let client: Call;
  let agency: Call;
  /** Each action that takes metadata: the request with `metadata`, and where a refusal names it. */
  let actions: { name: string; field: string; send: (metadata: unknown) => ReturnType<Call> }[];

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    client = caller(t, tenant.client);
    agency = caller(t, tenant.agency);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, {
      number: SMS_FROM,
      client_id: tenant.clientId,
    });
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 100 });
    await enableSdr(t, tenant, SDR_FROM);
    const sequence = await newSequence(client, [{ kind: 'sms', wait_minutes: 60, body: 'Hi' }]);
    const kb = (await client('POST', '/kb', { name: 'Help' })).body.knowledge_base.id;
    const campaign = (await agency('POST', '/sdr/campaigns', { name: 'Limits', from_number: SDR_FROM })).body
      .campaign.id;
    let n = 0;
    actions = [
      {
        name: 'POST /sms/messages',
        field: 'metadata',
        send: (metadata) =>
          client('POST', '/sms/messages', { to: `+1415555${7100 + n++}`, body: 'Hi', metadata }),
      },
      {
        name: 'POST /sequences/{id}/enrollments',
        field: 'metadata',
        send: async (metadata) =>
          client('POST', `/sequences/${sequence.id}/enrollments`, {
            contact_id: (await newContact(client)).id,
            metadata,
          }),
      },
      {
        name: 'POST /sdr/campaigns',
        field: 'metadata',
        send: (metadata) => agency('POST', '/sdr/campaigns', { name: 'M', from_number: SDR_FROM, metadata }),
      },
      {
        name: 'PATCH /sdr/campaigns/{id}',
        field: 'metadata',
        send: (metadata) => agency('PATCH', `/sdr/campaigns/${campaign}`, { metadata }),
      },
      {
        name: 'POST /sdr/campaigns/{id}/prospects',
        field: 'prospects.0.metadata',
        send: async (metadata) =>
          agency('POST', `/sdr/campaigns/${campaign}/prospects`, {
            prospects: [{ contact_id: (await newContact(client)).id, metadata }],
          }),
      },
      {
        name: 'POST /kb/{id}/documents',
        field: 'metadata',
        send: (metadata) =>
          client('POST', `/kb/${kb}/documents`, {
            title: 'Doc',
            source_type: 'manual',
            content: 'Text.',
            metadata,
          }),
      },
    ];
  });
  after(() => t.close());

  test('16 KB of JSON is taken; a byte more, or anything but an object, is 400 validation_error naming metadata', async () => {
    for (const action of actions) {
      for (const refused of [metadataOf(LIMIT + 1), ['a', 'list'], 'text', null]) {
        const reply = await action.send(refused);
        assert.equal(reply.status, 400, `${action.name}: ${JSON.stringify(reply.body).slice(0, 200)}`);
        assert.equal(reply.body.error, 'validation_error');
        assert.deepEqual(
          reply.body.details.fields.map((f: { field: string }) => f.field),
          [action.field],
          action.name,
        );
      }
      const taken = await action.send(metadataOf(LIMIT));
      assert.ok(
        taken.status < 300,
        `${action.name}: ${taken.status} ${JSON.stringify(taken.body).slice(0, 200)}`,
      );
    }
  });

  test('the limit counts UTF-8 bytes of the JSON text, not characters', async () => {
    const [sms] = actions;
    // 6,000 characters of three bytes each: 18,000 bytes.
    const wide = await sms.send({ note: '€'.repeat(6000) });
    assert.equal(wide.status, 400);
    assert.match(wide.body.message, /metadata must be at most 16384 bytes/);
  });
});
