import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { aiJobLoops } from '../../src/modules/ai-jobs/jobs.ts';
import type { LlmProvider } from '../../src/providers/llm/index.ts';
import { type Call, caller, eventsOf } from '../crm/crm-client.ts';
import {
  adminCall,
  buildTestApp,
  createTenant,
  eventually,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import {
  createWebhook,
  type ReceivedRequest,
  type Receiver,
  signatureMatches,
  startReceiver,
} from '../webhooks/receiver.ts';

/**
 * Pre-call briefs and lead enrichments, end to end: asked for over the API (202, 1 FUEL), written by
 * the worker loop with the builtin model, delivered signed to a subscribed receiver once per job with
 * the job as data and the request's metadata; a model failure (the simulator's failure switch) fails
 * the job with `ai.job.failed` and refunds it.
 */
describe('AI jobs: pre-call briefs and lead enrichments', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;
  let receiver: Receiver;
  let secret: string;

  before(async () => {
    t = await buildTestApp({ AI_JOB_POLL: '50ms', OUTBOUND_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 20 });
    receiver = await startReceiver();
    ({ secret } = await createWebhook(t, tenant.client, {
      url: `${receiver.url}/hook`,
      events: [
        'ai.precall_brief.completed',
        'ai.lead_enrichment.completed',
        'ai.job.failed',
        'contact.updated',
      ],
    }));
    await t.startWorker();
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  const fuel = async (): Promise<number> =>
    (await caller(t, tenant.agency)('GET', '/fuel')).body.fuel.balance;
  const delivered = (type: string, jobId: string): ReceivedRequest[] =>
    receiver.requests.filter((request) => request.body?.type === type && request.body?.data?.id === jobId);
  const finished = (id: string) =>
    eventually(async () => {
      const { body } = await call('GET', `/ai/jobs/${id}`);
      return ['completed', 'failed'].includes(body.job.status) ? body.job : false;
    });

  async function newContact(fields: Record<string, unknown>): Promise<string> {
    const { status, body } = await call('POST', '/crm/contacts', fields);
    assert.ok(status === 201 || status === 200, JSON.stringify(body));
    return body.contact.id;
  }
  async function logActivity(fields: Record<string, unknown>): Promise<void> {
    const { status, body } = await call('POST', '/crm/activities', fields);
    assert.equal(status, 201, JSON.stringify(body));
  }

  test('a brief: 202 pending at 1 FUEL, then completed, delivered signed once with its metadata', async () => {
    const contact = await newContact({
      email: 'ana@northwind.example',
      first_name: 'Ana',
      last_name: 'Lima',
    });
    await logActivity({
      activity_type: 'call',
      direction: 'outbound',
      contact_id: contact,
      subject: 'Outbound call',
      body: 'Asked for pricing for 40 seats; call back Thursday.',
      performed_at: '2026-11-20T10:00:00Z',
    });
    await logActivity({
      activity_type: 'sms',
      direction: 'inbound',
      contact_id: contact,
      body: 'Can we move the demo to Friday?',
      performed_at: '2026-11-21T10:00:00Z',
    });
    const before = await fuel();
    const asked = await call('POST', `/ai/contacts/${contact}/precall-brief`, {
      purpose: 'Confirm the demo date',
      metadata: { crm_ref: 'A-1' },
    });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    assert.equal(asked.body.job.kind, 'precall_brief');
    assert.equal(asked.body.job.subject_id, contact);
    assert.equal(asked.body.job.fuel_cost, 1);
    assert.deepEqual(asked.body.job.metadata, { crm_ref: 'A-1' });
    assert.equal(await fuel(), before - 1);

    const job = await finished(asked.body.job.id);
    assert.equal(job.status, 'completed');
    assert.match(job.result.brief, /Ana Lima/);
    assert.match(job.result.brief, /pricing for 40 seats/);
    assert.match(job.result.brief, /Confirm the demo date/);
    assert.ok(job.result.talking_points.some((point: string) => /demo to Friday/.test(point)));
    assert.equal(job.error_code, null);
    assert.ok(job.completed_at);

    const [event] = await eventually(async () => {
      const got = delivered('ai.precall_brief.completed', job.id);
      return got.length ? got : false;
    });
    assert.ok(signatureMatches(event, secret), 'signed with the subscription secret');
    assert.deepEqual(event.body.data, job);
    assert.deepEqual(event.body.metadata, { crm_ref: 'A-1' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(delivered('ai.precall_brief.completed', job.id).length, 1, 'once per job');
    assert.equal(await fuel(), before - 1, 'a completed job keeps its FUEL');
  });

  test('no FUEL: 402 fuel_exhausted and no job; an unknown contact: 404', async () => {
    const other = await createTenant(t.app);
    const otherCall = caller(t, other.client);
    const { body: created } = await otherCall('POST', '/crm/contacts', { email: 'x@poor.example' });
    const refused = await otherCall('POST', `/ai/contacts/${created.contact.id}/precall-brief`, {});
    assert.equal(refused.status, 402);
    assert.equal(refused.body.error, 'fuel_exhausted');
    assert.deepEqual((await otherCall('GET', '/ai/jobs')).body.data, []);

    const missing = await call('POST', '/ai/contacts/00000000-0000-4000-8000-000000000000/precall-brief', {});
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'not_found');
    const foreign = await call('POST', `/ai/contacts/${created.contact.id}/enrich`, {});
    assert.equal(foreign.status, 404, 'another tenant’s contact is not found');
  });

  test('a model failure fails the brief: ai.job.failed with error_code and metadata, FUEL refunded', async () => {
    const contact = await newContact({ email: 'bo@fail.example', first_name: 'Bo' });
    const before = await fuel();
    await adminCall(t.app, 'POST', '/simulator/llm/failures', { count: 1 });
    const asked = await call('POST', `/ai/contacts/${contact}/precall-brief`, { metadata: { try: 1 } });
    assert.equal(asked.status, 202);
    const job = await finished(asked.body.job.id);
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'ai_unavailable');
    assert.equal(job.result, null);
    assert.equal(await fuel(), before, 'refunded');
    const [event] = await eventually(async () => {
      const got = delivered('ai.job.failed', job.id);
      return got.length ? got : false;
    });
    assert.ok(signatureMatches(event, secret));
    assert.equal(event.body.data.error_code, 'ai_unavailable');
    assert.equal(event.body.data.kind, 'precall_brief');
    assert.deepEqual(event.body.metadata, { try: 1 });
    const { body: ledger } = await caller(t, tenant.agency)('GET', '/fuel/ledger?limit=200');
    const entries = ledger.data.filter((entry: any) => entry.reference_id === job.id);
    assert.deepEqual(entries.map((entry: any) => entry.amount).sort(), [-1, 1], 'one debit, one refund');

    // The switch held one failure: the next brief is written.
    const next = await call('POST', `/ai/contacts/${contact}/precall-brief`, {});
    assert.equal((await finished(next.body.job.id)).status, 'completed');
  });

  test('enrichment with apply writes empty fields only, with contact.updated; without apply, proposals only', async () => {
    const { body: company } = await call('POST', '/crm/companies', {
      name: 'Acme Dental',
      domain: 'acmedental.example',
    });
    const contact = await newContact({
      email: 'cy@acmedental.example',
      first_name: 'Cy',
      company_id: company.company.id,
    });
    await logActivity({
      activity_type: 'email',
      direction: 'inbound',
      contact_id: contact,
      company_id: company.company.id,
      subject: 'Intro',
      body: 'Hi, I am the Head of Operations here. Acme Dental runs four clinics in Porto.',
      performed_at: '2026-11-22T09:00:00Z',
    });
    const asked = await call('POST', `/ai/contacts/${contact}/enrich`, {
      apply: true,
      metadata: { batch: 7 },
    });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    assert.equal(asked.body.job.kind, 'lead_enrichment');
    const job = await finished(asked.body.job.id);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    const byField = Object.fromEntries(job.result.proposals.map((p: any) => [p.field, p]));
    assert.equal(byField.title.value, 'Head of Operations');
    assert.match(byField.title.evidence, /Head of Operations/);
    assert.equal(byField.lifecycle_stage.value, 'lead');
    assert.deepEqual([...job.result.applied].sort(), ['lifecycle_stage', 'title']);
    const { body: now } = await call('GET', `/crm/contacts/${contact}`);
    assert.equal(now.contact.title, 'Head of Operations');
    assert.equal(now.contact.lifecycle_stage, 'lead');

    const [event] = await eventually(async () => {
      const got = delivered('ai.lead_enrichment.completed', job.id);
      return got.length ? got : false;
    });
    assert.ok(signatureMatches(event, secret));
    assert.deepEqual(event.body.data, job);
    assert.deepEqual(event.body.metadata, { batch: 7 });
    const update = await eventually(async () =>
      receiver.requests.find(
        (request) =>
          request.body?.type === 'contact.updated' &&
          request.body.data.id === contact &&
          request.body.data.changed_fields.includes('title'),
      ),
    );
    assert.deepEqual(update.body.metadata, { batch: 7 }, 'the apply echoes the job’s metadata');

    // A value a person set is never overwritten, and nothing is proposed for it.
    await call('PATCH', `/crm/contacts/${contact}`, { title: 'COO' });
    const again = await finished(
      (await call('POST', `/ai/contacts/${contact}/enrich`, { apply: true })).body.job.id,
    );
    assert.ok(!again.result.proposals.some((p: any) => p.field === 'title'));
    assert.equal((await call('GET', `/crm/contacts/${contact}`)).body.contact.title, 'COO');

    // A company, for review only: proposals with evidence, nothing written.
    const review = await finished(
      (await call('POST', `/ai/companies/${company.company.id}/enrich`, {})).body.job.id,
    );
    const proposals = Object.fromEntries(review.result.proposals.map((p: any) => [p.field, p]));
    assert.equal(proposals.industry.value, 'Healthcare');
    assert.match(proposals.industry.evidence, /Dental/);
    assert.match(proposals.business_description.value, /runs four clinics/);
    assert.deepEqual(review.result.applied, []);
    const { body: unchanged } = await call('GET', `/crm/companies/${company.company.id}`);
    assert.equal(unchanged.company.industry, null);
  });

  test('a failed enrichment: ai.job.failed, refunded', async () => {
    const contact = await newContact({ email: 'di@fail.example' });
    const before = await fuel();
    await adminCall(t.app, 'POST', '/simulator/llm/failures', { count: 1 });
    const job = await finished(
      (await call('POST', `/ai/contacts/${contact}/enrich`, { metadata: { k: 'v' } })).body.job.id,
    );
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'ai_unavailable');
    assert.equal(await fuel(), before);
    const [event] = await eventually(async () => {
      const got = delivered('ai.job.failed', job.id);
      return got.length ? got : false;
    });
    assert.equal(event.body.data.kind, 'lead_enrichment');
    assert.deepEqual(event.body.metadata, { k: 'v' });
  });

  test('the list filters by kind, status and subject, pages, and shows a client only its own jobs', async () => {
    const contact = await newContact({ email: 'ed@list.example' });
    for (let i = 0; i < 3; i++) await call('POST', `/ai/contacts/${contact}/precall-brief`, {});
    const { body: bySubject } = await call('GET', `/ai/jobs?subject_id=${contact}&limit=2`);
    assert.equal(bySubject.data.length, 2);
    assert.ok(bySubject.next_page_token);
    const { body: rest } = await call(
      'GET',
      `/ai/jobs?subject_id=${contact}&limit=2&page_token=${bySubject.next_page_token}`,
    );
    assert.equal(rest.data.length, 1);
    const { body: failed } = await call('GET', '/ai/jobs?status=failed&limit=200');
    assert.ok(failed.data.length >= 2 && failed.data.every((job: any) => job.status === 'failed'));
    const { body: enrichments } = await call('GET', '/ai/jobs?kind=lead_enrichment&limit=200');
    assert.ok(enrichments.data.every((job: any) => job.kind === 'lead_enrichment'));
    const { body: house } = await caller(t, tenant.agency)('GET', '/ai/jobs');
    assert.deepEqual(house.data, [], 'the house client has none of the client’s jobs');
    const foreign = await caller(t, tenant.agency)('GET', `/ai/jobs/${bySubject.data[0].id}`);
    assert.equal(foreign.status, 404);
  });

  test('the failure switch is an admin call of the builtin model only', async () => {
    const refused = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/simulator/llm/failures',
      payload: { count: 1 },
    });
    assert.equal(refused.statusCode, 401);
  });
});

/**
 * The AI job loop run by the test, one pass at a time, with `AI_JOB_FUEL_COST=3`: what is debited and
 * refunded is the configured cost, and a job its workers never finished fails `worker_lost` once.
 */
describe('AI jobs at a cost of 3 FUEL, the loop run by hand', () => {
  const GRANT = 40;
  let t: TestApp;
  let call: Call;
  let agency: Call;

  before(async () => {
    t = await buildTestApp({ AI_JOB_FUEL_COST: '3' });
    const tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    agency = caller(t, tenant.agency);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: GRANT });
  });
  after(async () => {
    await t?.close();
  });

  const runLoop = (llm: LlmProvider = t.platform.providers.llm) =>
    aiJobLoops({ ...t.platform, providers: { ...t.platform.providers, llm } })[0].run();
  const fuel = async (): Promise<number> => (await agency('GET', '/fuel')).body.fuel.balance;
  const job = async (id: string) => (await call('GET', `/ai/jobs/${id}`)).body.job;
  const ledgerOf = async (id: string) =>
    (await agency('GET', '/fuel/ledger?limit=200')).body.data
      .filter((entry: any) => entry.reference_id === id)
      .map((entry: any) => entry.amount)
      .sort();
  async function briefOfNewContact(email: string): Promise<string> {
    const { body } = await call('POST', '/crm/contacts', { email });
    const asked = await call('POST', `/ai/contacts/${body.contact.id}/precall-brief`, {});
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    assert.equal(asked.body.job.fuel_cost, 3);
    return asked.body.job.id;
  }

  test('3 debited on acceptance, kept when written, 3 refunded when the model fails', async () => {
    const written = await briefOfNewContact('three@cost.example');
    assert.equal(await fuel(), GRANT - 3);
    await runLoop();
    assert.equal((await job(written)).status, 'completed');
    assert.equal(await fuel(), GRANT - 3);

    await adminCall(t.app, 'POST', '/simulator/llm/failures', { count: 1 });
    const failed = await briefOfNewContact('three@fail.example');
    assert.equal(await fuel(), GRANT - 6);
    await runLoop();
    assert.equal((await job(failed)).error_code, 'ai_unavailable');
    assert.equal(await fuel(), GRANT - 3);
    assert.deepEqual(await ledgerOf(failed), [-3, 3]);
  });

  test('a job claimed past its attempts (its workers died) fails worker_lost, refunded once', async () => {
    const lost = await briefOfNewContact('lost@cost.example');
    const before = await fuel();
    // As three workers that each claimed it and died would leave it: running, its lease over.
    await t.database.pool.query(
      `UPDATE ai_jobs SET status = 'running', attempts = $2, lease_until = now() - interval '1 second' WHERE id = $1`,
      [lost, t.config.aiJobMaxAttempts],
    );
    await runLoop();
    await runLoop();
    const now = await job(lost);
    assert.equal(now.status, 'failed');
    assert.equal(now.error_code, 'worker_lost');
    assert.equal(now.result, null);
    assert.equal(await fuel(), before + 3);
    assert.deepEqual(await ledgerOf(lost), [-3, 3]);
    const failures = (await eventsOf(call, 'ai.job.failed')).filter((event) => event.data.id === lost);
    assert.equal(failures.length, 1);
    assert.equal(failures[0].data.error_code, 'worker_lost');
  });

  async function dentalCompany(name: string, fields: Record<string, unknown> = {}): Promise<string> {
    const domain = `${name.toLowerCase().replace(/ /g, '')}.example`;
    const { body } = await call('POST', '/crm/companies', { name, domain, ...fields });
    const logged = await call('POST', '/crm/activities', {
      activity_type: 'note',
      company_id: body.company.id,
      body: `${name} runs four clinics in Porto.`,
      performed_at: '2026-11-22T09:00:00Z',
    });
    assert.equal(logged.status, 201, JSON.stringify(logged.body));
    return body.company.id;
  }
  const companyUpdates = async (id: string) =>
    (await eventsOf(call, 'company.updated')).filter((event) => event.data.id === id);

  test('a company enrichment with apply writes its empty fields only, with one company.updated', async () => {
    const id = await dentalCompany('Acme Dental', { industry: 'Dentistry' });
    const asked = await call('POST', `/ai/companies/${id}/enrich`, { apply: true, metadata: { batch: 9 } });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    await runLoop();
    const done = await job(asked.body.job.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(
      done.result.proposals.map((proposal: any) => proposal.field),
      ['business_description'],
      'nothing is proposed for a field that has a value',
    );
    assert.deepEqual(done.result.applied, ['business_description']);
    const { body } = await call('GET', `/crm/companies/${id}`);
    assert.equal(body.company.industry, 'Dentistry');
    assert.match(body.company.business_description, /runs four clinics/);

    const [update, ...more] = await companyUpdates(id);
    assert.deepEqual(more, [], 'one company.updated');
    const { changed_fields, previous_attributes, ...company } = update.data;
    assert.deepEqual(company, body.company);
    assert.deepEqual(changed_fields, ['business_description']);
    assert.deepEqual(previous_attributes, { business_description: null });
    assert.deepEqual(update.metadata, { batch: 9 }, 'the enrichment’s metadata');
  });

  test('a field a person fills between the proposal and the apply is not overwritten', async () => {
    const id = await dentalCompany('Bright Dental');
    const builtin = t.platform.providers.llm;
    // The model answers, then a person sets the industry before the job writes its proposals.
    const racing: LlmProvider = Object.assign(Object.create(builtin), {
      proposeEnrichment: async (source: Parameters<LlmProvider['proposeEnrichment']>[0]) => {
        const proposed = await builtin.proposeEnrichment(source);
        const set = await call('PATCH', `/crm/companies/${id}`, { industry: 'Orthodontics' });
        assert.equal(set.status, 200);
        return proposed;
      },
    });
    const asked = await call('POST', `/ai/companies/${id}/enrich`, { apply: true });
    await runLoop(racing);
    const done = await job(asked.body.job.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const proposed = Object.fromEntries(done.result.proposals.map((p: any) => [p.field, p.value]));
    assert.equal(proposed.industry, 'Healthcare', 'proposed while the industry was empty');
    assert.deepEqual(done.result.applied, ['business_description']);
    assert.equal((await call('GET', `/crm/companies/${id}`)).body.company.industry, 'Orthodontics');
    assert.deepEqual(
      (await companyUpdates(id)).map((event) => event.data.changed_fields),
      [['industry'], ['business_description']],
      'the person’s change, then the enrichment’s',
    );
  });
});
