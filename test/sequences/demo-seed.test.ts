import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seedDemo } from '../../src/seed/demo.ts';
import { caller } from '../crm/crm-client.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';
import { enroll, newContact } from './support.ts';

describe('the demo seed', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('gives the demo client an active three-step ladder a contact can be enrolled in', async () => {
    const demo = await seedDemo(t.platform.db);
    assert.ok(demo);
    const call = caller(t, { authorization: `Bearer ${demo.clientKey}` });
    const { body } = await call('GET', '/sequences');
    assert.equal(body.total, 1);
    const [sequence] = body.data;
    assert.equal(sequence.status, 'active');
    assert.deepEqual(
      sequence.steps.map((s: any) => [s.kind, s.wait_minutes]),
      [
        ['sms', 0],
        ['email', 1440],
        ['sms', 2880],
      ],
    );
    const enrollment = await enroll(call, sequence.id, (await newContact(call)).id);
    assert.equal(enrollment.status, 'active');
  });
});
