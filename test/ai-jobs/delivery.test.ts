import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  sleep,
  type TestApp,
  testEnv,
} from '../helpers.ts';
import { type Fleet, startWorkers } from '../reliability/takeover.ts';
import { createWebhook, type Receiver, signatureMatches, startReceiver } from '../webhooks/receiver.ts';

const BRIEFS = 6;
const GRANT = 20;
const EVENTS = ['ai.precall_brief.completed', 'ai.lead_enrichment.completed', 'ai.job.failed'];

/**
 * The async path end to end with two worker processes on one database: they claim the jobs, call the
 * builtin model, and deliver the events to a real receiver. Each job's event arrives signed, once,
 * with the job as its data and the request's metadata; a brief the model fails is refunded.
 */
describe('AI job events, delivered by two workers', () => {
  let t: TestApp;
  let receiver: Receiver;
  let fleet: Fleet | null = null;

  before(async () => {
    const env = { AI_JOB_POLL: '50ms', OUTBOUND_ALLOW_PRIVATE: 'true' };
    t = await buildTestApp(env);
    receiver = await startReceiver();
    fleet = await startWorkers(2, testEnv(t.database.url, env));
  });
  after(async () => {
    await fleet?.stop();
    await receiver?.close();
    await t?.close();
  });

  test('briefs, an enrichment and a failed brief: each event once, signed, with its job and metadata', {
    timeout: 120_000,
  }, async () => {
    const tenant = await createTenant(t.app);
    const call = caller(t, tenant.client);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: GRANT });
    const { secret } = await createWebhook(t, tenant.client, { url: `${receiver.url}/hook`, events: EVENTS });
    const fuel = async (): Promise<number> =>
      (await caller(t, tenant.agency)('GET', '/fuel')).body.fuel.balance;
    const finished = (id: string) =>
      eventually(async () => {
        const { body } = await call('GET', `/ai/jobs/${id}`);
        return ['completed', 'failed'].includes(body.job.status) ? body.job : false;
      }, 60_000);
    const newContact = async (fields: Record<string, unknown>): Promise<string> => {
      const { status, body } = await call('POST', '/crm/contacts', fields);
      assert.equal(status, 201, JSON.stringify(body));
      return body.contact.id;
    };

    // The failure first, alone, so that it is the one job the model fails.
    await adminCall(t.app, 'POST', '/simulator/llm/failures', { count: 1 });
    const doomed = await newContact({ email: 'fay@fail.example', first_name: 'Fay' });
    const failing = await call('POST', `/ai/contacts/${doomed}/precall-brief`, {
      metadata: { case: 'fail' },
    });
    assert.equal(failing.status, 202, JSON.stringify(failing.body));
    const failed = await finished(failing.body.job.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_code, 'ai_unavailable');
    assert.equal(await fuel(), GRANT, 'the failed brief is refunded');

    const asked: { id: string; type: string; metadata: Record<string, unknown> }[] = [
      { id: failed.id, type: 'ai.job.failed', metadata: { case: 'fail' } },
    ];
    for (let i = 0; i < BRIEFS; i++) {
      const contact = await newContact({ email: `p${i}@brief.example`, first_name: `P${i}` });
      const metadata = { case: 'brief', n: i };
      const { status, body } = await call('POST', `/ai/contacts/${contact}/precall-brief`, { metadata });
      assert.equal(status, 202, JSON.stringify(body));
      asked.push({ id: body.job.id, type: 'ai.precall_brief.completed', metadata });
    }
    const lead = await newContact({ email: 'lee@enrich.example', first_name: 'Lee' });
    const enrichment = await call('POST', `/ai/contacts/${lead}/enrich`, { metadata: { case: 'enrich' } });
    assert.equal(enrichment.status, 202, JSON.stringify(enrichment.body));
    asked.push({
      id: enrichment.body.job.id,
      type: 'ai.lead_enrichment.completed',
      metadata: { case: 'enrich' },
    });

    const jobs = new Map<string, any>();
    for (const { id } of asked) jobs.set(id, await finished(id));
    for (const { id } of asked.slice(1)) assert.equal(jobs.get(id).status, 'completed', id);

    const deliveriesOf = (id: string) => receiver.requests.filter((request) => request.body?.data?.id === id);
    await eventually(async () => asked.every(({ id }) => deliveriesOf(id).length > 0), 30_000);
    // Long enough for a second worker's duplicate, had there been one, to arrive.
    await sleep(1000);
    for (const { id, type, metadata } of asked) {
      const got = deliveriesOf(id);
      assert.equal(got.length, 1, `${type} of ${id} arrives once`);
      const [delivery] = got;
      assert.ok(signatureMatches(delivery, secret), 'signed with the subscription secret');
      assert.equal(delivery.body.type, type);
      const { error_message: message, ...job } = delivery.body.data;
      assert.deepEqual(job, jobs.get(id), 'the job as GET /v1/ai/jobs/{id} shows it');
      if (type === 'ai.job.failed') assert.match(message, /unavailable/);
      else assert.equal(message, undefined);
      assert.deepEqual(delivery.body.metadata, metadata);
    }
    assert.equal(receiver.requests.length, asked.length, 'nothing else was delivered');

    assert.equal(await fuel(), GRANT - BRIEFS - 1, 'the completed jobs keep their FUEL');
    const { body: ledger } = await caller(t, tenant.agency)('GET', '/fuel/ledger?limit=200');
    const ofFailed = ledger.data.filter((entry: any) => entry.reference_id === failed.id);
    assert.deepEqual(ofFailed.map((entry: any) => entry.amount).sort(), [-1, 1], 'one debit, one refund');
  });
});
