import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createTenant, type TestApp, type TestTenant } from '../helpers.ts';
import { type Call, caller, eventsOf } from './crm-client.ts';

describe('contact phones and emails', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
  });
  after(() => t.close());

  const newContact = async (email: string) =>
    (await call('POST', '/crm/contacts', { email })).body.contact.id as string;
  const phonesOf = async (id: string) =>
    (await call('GET', `/crm/contacts/${id}/phones`)).body.data.map((p: any) => [p.phone, p.is_primary]);

  describe('phones', () => {
    test('the first phone is primary; is_primary true demotes the previous; fields and defaults', async () => {
      const id = await newContact('phones1@example.org');
      const first = await call('POST', `/crm/contacts/${id}/phones`, {
        phone: '+1 415-555-2671',
        is_primary: false,
      });
      assert.equal(first.status, 201);
      assert.equal(first.body.created, true);
      assert.deepEqual(
        {
          phone: first.body.phone.phone,
          phone_type: first.body.phone.phone_type,
          is_primary: first.body.phone.is_primary,
          status: first.body.phone.status,
          consent_status: first.body.phone.consent_status,
          contact_id: first.body.phone.contact_id,
        },
        {
          phone: '+14155552671',
          phone_type: 'mobile',
          is_primary: true,
          status: 'unverified',
          consent_status: 'unknown',
          contact_id: id,
        },
      );
      const second = await call('POST', `/crm/contacts/${id}/phones`, {
        phone: '+442079460958',
        phone_type: 'work',
        consent_status: 'opt_in',
        consent_source: 'web form',
        consented_at: '2025-01-02T03:04:05Z',
        source: 'import',
      });
      assert.equal(second.status, 201);
      assert.equal(second.body.phone.is_primary, false);
      assert.equal(second.body.phone.consented_at, '2025-01-02T03:04:05.000Z');
      assert.equal(second.body.phone.consent_source, 'web form');
      const third = await call('POST', `/crm/contacts/${id}/phones`, {
        phone: '+14155550100',
        is_primary: true,
      });
      assert.equal(third.body.phone.is_primary, true);
      assert.deepEqual(await phonesOf(id), [
        ['+14155550100', true],
        ['+14155552671', false],
        ['+442079460958', false],
      ]);
      assert.equal((await call('GET', `/crm/contacts/${id}`)).body.contact.phone, '+14155550100');
    });

    test('re-adding an attached number is 200 created false; another contact is 409 phone_in_use', async () => {
      const id = await newContact('phones2@example.org');
      const added = await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550101' });
      const again = await call('POST', `/crm/contacts/${id}/phones`, { phone: '(415) 555-0101' });
      assert.equal(again.status, 200);
      assert.equal(again.body.created, false);
      assert.equal(again.body.phone.id, added.body.phone.id);
      const other = await newContact('phones3@example.org');
      const taken = await call('POST', `/crm/contacts/${other}/phones`, { phone: '+14155550101' });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.error, 'phone_in_use');
      assert.equal(taken.body.details.contact_id, id);
      assert.deepEqual(await phonesOf(other), []);
    });

    test('GET, PATCH and DELETE one phone; deleting the primary promotes the oldest left', async () => {
      const id = await newContact('phones4@example.org');
      const a = (await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550102' })).body.phone;
      const b = (await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550103' })).body.phone;
      const c = (await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550104' })).body.phone;
      assert.deepEqual((await call('GET', `/crm/contacts/${id}/phones/${b.id}`)).body.phone, b);

      const patched = await call('PATCH', `/crm/contacts/${id}/phones/${b.id}`, {
        phone_type: 'home',
        status: 'verified',
        consent_status: 'do_not_call',
        dnc_scope: 'global',
        consented_at: null,
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.phone.phone_type, 'home');
      assert.equal(patched.body.phone.status, 'verified');
      assert.equal(patched.body.phone.dnc_scope, 'global');
      const cleared = await call('PATCH', `/crm/contacts/${id}/phones/${b.id}`, { dnc_scope: null });
      assert.equal(cleared.body.phone.dnc_scope, null);

      const promote = await call('PATCH', `/crm/contacts/${id}/phones/${c.id}`, { is_primary: true });
      assert.equal(promote.body.phone.is_primary, true);
      assert.deepEqual(await phonesOf(id), [
        ['+14155550104', true],
        ['+14155550102', false],
        ['+14155550103', false],
      ]);
      assert.equal((await call('DELETE', `/crm/contacts/${id}/phones/${c.id}`)).status, 204);
      assert.deepEqual(await phonesOf(id), [
        ['+14155550102', true],
        ['+14155550103', false],
      ]);
      assert.equal((await call('GET', `/crm/contacts/${id}`)).body.contact.phone, '+14155550102');
      assert.equal((await call('GET', `/crm/contacts/${id}/phones/${c.id}`)).status, 404);
      assert.equal((await call('DELETE', `/crm/contacts/${id}/phones/${c.id}`)).status, 404);

      const stepDown = await call('PATCH', `/crm/contacts/${id}/phones/${a.id}`, { is_primary: false });
      assert.equal(stepDown.body.phone.is_primary, false);
      assert.deepEqual(await phonesOf(id), [
        ['+14155550103', true],
        ['+14155550102', false],
      ]);
      await call('DELETE', `/crm/contacts/${id}/phones/${a.id}`);
      const only = await call('PATCH', `/crm/contacts/${id}/phones/${b.id}`, { is_primary: false });
      assert.equal(only.status, 400);
      assert.equal(only.body.error, 'validation_error');
      await call('DELETE', `/crm/contacts/${id}/phones/${b.id}`);
      assert.equal((await call('GET', `/crm/contacts/${id}`)).body.contact.phone, null);
    });

    test('a phone of another contact is 404 under this one', async () => {
      const one = await newContact('phones5@example.org');
      const two = await newContact('phones6@example.org');
      const phone = (await call('POST', `/crm/contacts/${one}/phones`, { phone: '+14155550105' })).body.phone;
      assert.equal((await call('GET', `/crm/contacts/${two}/phones/${phone.id}`)).status, 404);
      assert.equal(
        (await call('PATCH', `/crm/contacts/${two}/phones/${phone.id}`, { status: 'verified' })).status,
        404,
      );
      assert.equal((await call('DELETE', `/crm/contacts/${two}/phones/${phone.id}`)).status, 404);
      assert.equal(
        (await call('GET', '/crm/contacts/00000000-0000-4000-8000-000000000000/phones')).status,
        404,
      );
      assert.equal(
        (
          await call('POST', '/crm/contacts/00000000-0000-4000-8000-000000000000/phones', {
            phone: '+14155550106',
          })
        ).status,
        404,
      );
    });

    test('every enum is validated and bad numbers are 400', async () => {
      const id = await newContact('phones7@example.org');
      const bodies = [
        { phone: '+14155550107', phone_type: 'fax' },
        { phone: '+14155550107', status: 'great' },
        { phone: '+14155550107', consent_status: 'maybe' },
        { phone: '+14155550107', dnc_scope: 'planet' },
        { phone: '+14155550107', consented_at: 'yesterday' },
        { phone: 'call me' },
        { phone: '+14155550107', is_primary: 'sure' },
        {},
      ];
      for (const body of bodies) {
        const reply = await call('POST', `/crm/contacts/${id}/phones`, body);
        assert.equal(reply.status, 400, JSON.stringify(body));
        assert.equal(reply.body.error, 'validation_error', JSON.stringify(body));
      }
      const phone = (await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550107' })).body.phone;
      for (const body of [{ phone_type: 'pager' }, { consent_status: 'yes' }, { phone: '+14155550108' }]) {
        const reply = await call('PATCH', `/crm/contacts/${id}/phones/${phone.id}`, body);
        assert.equal(reply.status, 400, JSON.stringify(body));
      }
    });

    test('Idempotency-Key replays an add', async () => {
      const id = await newContact('phones8@example.org');
      const headers = { 'idempotency-key': 'phone-add-1' };
      const first = await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550109' }, headers);
      const replay = await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550109' }, headers);
      assert.equal(first.status, 201);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
    });

    test('adding, changing and removing a phone emits contact.updated with the phone', async () => {
      const id = await newContact('phones9@example.org');
      const phone = (await call('POST', `/crm/contacts/${id}/phones`, { phone: '+14155550110' })).body.phone;
      await call('PATCH', `/crm/contacts/${id}/phones/${phone.id}`, { status: 'verified' });
      await call('PATCH', `/crm/contacts/${id}/phones/${phone.id}`, { status: 'verified' });
      await call('DELETE', `/crm/contacts/${id}/phones/${phone.id}`);
      const events = (await eventsOf(call, 'contact.updated')).filter((e) => e.data.id === id);
      assert.deepEqual(
        events.map((e) => [e.data.sub_records[0].action, e.data.changed_fields.sort(), e.data.phone]),
        [
          ['added', ['phone', 'phones'], '+14155550110'],
          ['updated', ['phones'], '+14155550110'],
          ['deleted', ['phone', 'phones'], null],
        ],
      );
      assert.equal(events[0].data.sub_records[0].record.id, phone.id);
      assert.equal(events[1].data.sub_records[0].record.status, 'verified');
    });
  });

  describe('emails', () => {
    test('lower-cased, first primary, 200 on re-add, 409 email_in_use, primary promotion on delete', async () => {
      const id = await newContact('Emails1@Example.org');
      const listed = await call('GET', `/crm/contacts/${id}/emails`);
      assert.deepEqual(
        listed.body.data.map((e: any) => [e.email, e.is_primary]),
        [['emails1@example.org', true]],
      );
      const again = await call('POST', `/crm/contacts/${id}/emails`, { email: 'EMAILS1@example.org' });
      assert.equal(again.status, 200);
      assert.equal(again.body.created, false);
      const work = await call('POST', `/crm/contacts/${id}/emails`, {
        email: 'Work@Example.org',
        status: 'verified',
        source: 'crm',
        is_primary: true,
      });
      assert.equal(work.status, 201);
      assert.deepEqual(
        [work.body.email.email, work.body.email.is_primary, work.body.email.status, work.body.email.source],
        ['work@example.org', true, 'verified', 'crm'],
      );
      assert.equal((await call('GET', `/crm/contacts/${id}`)).body.contact.email, 'work@example.org');

      const other = await newContact('emails2@example.org');
      const taken = await call('POST', `/crm/contacts/${other}/emails`, { email: 'work@example.org' });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.error, 'email_in_use');

      const patched = await call('PATCH', `/crm/contacts/${id}/emails/${work.body.email.id}`, {
        status: 'bounced',
      });
      assert.equal(patched.body.email.status, 'bounced');
      const bad = await call('PATCH', `/crm/contacts/${id}/emails/${work.body.email.id}`, { status: 'spam' });
      assert.equal(bad.status, 400);
      const badSource = await call('PATCH', `/crm/contacts/${id}/emails/${work.body.email.id}`, {
        email: 'x@y.z',
      });
      assert.equal(badSource.status, 400);

      assert.equal((await call('DELETE', `/crm/contacts/${id}/emails/${work.body.email.id}`)).status, 204);
      const after = await call('GET', `/crm/contacts/${id}/emails`);
      assert.deepEqual(
        after.body.data.map((e: any) => [e.email, e.is_primary]),
        [['emails1@example.org', true]],
      );
      assert.equal((await call('GET', `/crm/contacts/${id}`)).body.contact.email, 'emails1@example.org');
      // The removed address is free again, and an upsert by it now creates a new contact.
      const reused = await call('POST', '/crm/contacts', { email: 'work@example.org' });
      assert.equal(reused.status, 201);
    });

    test('a bad email or status is 400', async () => {
      const id = await newContact('emails3@example.org');
      for (const body of [
        { email: 'nope' },
        { email: 'a@b.c', status: 'unsubscribed' },
        { status: 'verified' },
      ]) {
        const reply = await call('POST', `/crm/contacts/${id}/emails`, body);
        assert.equal(reply.status, 400, JSON.stringify(body));
        assert.equal(reply.body.error, 'validation_error');
      }
    });
  });
});
