import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { sweepExpiredClaims } from '../../src/modules/ai/jobs.ts';
import { debitFuel } from '../../src/modules/fuel/service.ts';
import { newId } from '../../src/platform/db/ids.ts';
import { inTransaction } from '../../src/platform/db/transaction.ts';
import { type Call, caller } from '../crm/crm-client.ts';
import {
  ADMIN_TOKEN,
  adminCall,
  buildTestApp,
  createTenant,
  type TestApp,
  type TestTenant,
} from '../helpers.ts';
import { type LlmStandIn, startLlmStandIn } from './llm-stand-in.ts';

async function balance(call: Call): Promise<number> {
  return (await call('GET', '/fuel')).body.fuel.balance;
}

async function gistLedger(call: Call) {
  const { body } = await call('GET', '/fuel/ledger?limit=200');
  return body.data.filter((entry: any) => entry.reference_type === 'gist');
}

/** Gist rows of a subject, ready or generating: one per generation. */
async function gistRows(t: TestApp, subjectId: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM gists WHERE subject_id = ${subjectId}`.execute(t.platform.db);
  return rows[0].n;
}

describe('gists with the builtin summarizer', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    t = await buildTestApp();
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
  });
  after(() => t.close());

  test('a miss costs 1, a hit 0 with cached true; a new activity is a miss; force costs 1', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 10 });
    const { body: created } = await call('POST', '/crm/contacts', {
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      title: 'CTO',
      company_name: 'Analytical Engines',
    });
    const id = created.contact.id;

    const first = await call('POST', `/ai/contacts/${id}/gist`);
    assert.equal(first.status, 200);
    const gist = first.body.gist;
    assert.equal(gist.cached, false);
    assert.equal(gist.fuel_cost, 1);
    assert.equal(gist.subject_type, 'contact');
    assert.equal(gist.subject_id, id);
    assert.match(gist.summary, /Ada Lovelace is CTO at Analytical Engines/);
    assert.equal(gist.model, 'builtin-summarizer-1');
    assert.match(gist.source_hash, /^[0-9a-f]{64}$/);
    assert.equal(await balance(call), 9);

    const again = await call('POST', `/ai/contacts/${id}/gist`);
    assert.equal(again.body.gist.id, gist.id);
    assert.equal(again.body.gist.cached, true);
    assert.equal(again.body.gist.fuel_cost, 0);
    assert.equal(await balance(call), 9);

    const activity = await call('POST', '/crm/activities', {
      activity_type: 'call',
      contact_id: id,
      subject: 'Discovery call',
      outcome: 'interested',
    });
    assert.equal(activity.status, 201);
    const changed = await call('POST', `/ai/contacts/${id}/gist`);
    assert.equal(changed.body.gist.cached, false);
    assert.notEqual(changed.body.gist.id, gist.id);
    assert.notEqual(changed.body.gist.source_hash, gist.source_hash);
    assert.match(changed.body.gist.summary, /Discovery call/);
    assert.equal(await balance(call), 8);

    const forced = await call('POST', `/ai/contacts/${id}/gist?force=true`);
    assert.equal(forced.body.gist.cached, false);
    assert.equal(forced.body.gist.fuel_cost, 1);
    assert.notEqual(forced.body.gist.id, changed.body.gist.id);
    assert.equal(forced.body.gist.source_hash, changed.body.gist.source_hash);
    assert.equal(await balance(call), 7);

    // Each generated gist is one ledger entry, reason gist, the gist as reference.
    const ledger = await gistLedger(call);
    assert.deepEqual(
      ledger.map((entry: any) => [entry.reason, entry.amount, entry.reference_id]).sort(),
      [gist.id, changed.body.gist.id, forced.body.gist.id].map((ref) => ['gist', -1, ref]).sort(),
    );
  });

  test('with 0 FUEL a miss is 402 and the balance stays 0; a hit still answers at cost 0', async () => {
    const poor = await createTenant(t.app);
    const poorCall = caller(t, poor.agency);
    const { body } = await poorCall('POST', '/crm/contacts', {
      email: 'grace@example.com',
      full_name: 'Grace',
    });
    const miss = await poorCall('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(miss.status, 402);
    assert.equal(miss.body.error, 'fuel_exhausted');
    assert.deepEqual(miss.body.details, { required: 1, balance: 0 });
    assert.equal(await balance(poorCall), 0);
    assert.equal((await gistLedger(poorCall)).length, 0);

    await adminCall(t.app, 'POST', `/orgs/${poor.orgId}/fuel`, { amount: 1 });
    const paid = await poorCall('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(paid.status, 200);
    assert.equal(await balance(poorCall), 0);
    const hit = await poorCall('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(hit.status, 200);
    assert.equal(hit.body.gist.cached, true);
    assert.equal(hit.body.gist.fuel_cost, 0);
    const forced = await poorCall('POST', `/ai/contacts/${body.contact.id}/gist?force=true`);
    assert.equal(forced.status, 402);
    assert.equal(await balance(poorCall), 0);
  });

  test('companies and deals have gists: people, open deals with amounts and stages', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 10 });
    const company = await call('POST', '/crm/companies', {
      name: 'Babbage & Co',
      domain: 'babbage.example',
      industry: 'Computing',
    });
    const companyId = company.body.company.id;
    const contact = await call('POST', '/crm/contacts', {
      email: 'charles@babbage.example',
      full_name: 'Charles Babbage',
      company_id: companyId,
    });
    const deal = await call('POST', '/crm/deals', {
      name: 'Difference Engine',
      amount: 25000,
      company_id: companyId,
      primary_contact_id: contact.body.contact.id,
    });
    assert.equal(deal.status, 201);
    await call('POST', '/crm/tasks', { title: 'Send the proposal', deal_id: deal.body.deal.id });

    const companyGist = await call('POST', `/ai/companies/${companyId}/gist`);
    assert.equal(companyGist.status, 200);
    assert.match(companyGist.body.gist.summary, /Babbage & Co \(babbage.example\) is a company in Computing/);
    assert.match(companyGist.body.gist.summary, /Charles Babbage/);
    assert.match(companyGist.body.gist.summary, /Difference Engine/);

    const dealGist = await call('POST', `/ai/deals/${deal.body.deal.id}/gist`);
    assert.equal(dealGist.status, 200);
    assert.match(dealGist.body.gist.summary, /Difference Engine is an open deal worth USD 25,000/);
    assert.match(dealGist.body.gist.summary, /Send the proposal/);
    assert.equal(dealGist.body.gist.subject_type, 'deal');
  });

  test('ten parallel misses with a model that answers at once: one generation, one debit, one id', async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 50 });
    // Several contacts: each is a fresh race between requests that read "no gist" and one that already wrote it.
    for (let round = 0; round < 5; round++) {
      const { body } = await call('POST', '/crm/contacts', { email: `burst${round}@example.com` });
      const start = await balance(call);
      const replies = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', `/ai/contacts/${body.contact.id}/gist`)),
      );
      assert.deepEqual(
        replies.map((reply) => reply.status),
        Array(10).fill(200),
      );
      assert.equal(new Set(replies.map((reply) => reply.body.gist.id)).size, 1);
      assert.deepEqual(
        replies.map((reply) => [reply.body.gist.cached, reply.body.gist.fuel_cost]).sort(),
        [[false, 1], ...Array(9).fill([true, 0])].sort(),
      );
      assert.equal(await balance(call), start - 1);
      assert.equal(await gistRows(t, body.contact.id), 1);
    }
  });

  test("another tenant's record, or none, is 404 and costs nothing", async () => {
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 5 });
    const { body } = await call('POST', '/crm/contacts', { email: 'own@example.com' });
    const before = await balance(call);
    // The agency key acting as itself is the house client: the client's contact is not there.
    const other = await caller(t, tenant.agency)('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(other.status, 404);
    assert.equal(other.body.error, 'not_found');
    const stranger = await createTenant(t.app);
    await adminCall(t.app, 'POST', `/orgs/${stranger.orgId}/fuel`, { amount: 5 });
    const foreign = await caller(t, stranger.client)('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(foreign.status, 404);
    for (const path of ['contacts', 'companies', 'deals']) {
      const missing = await call('POST', `/ai/${path}/${newId()}/gist`);
      assert.equal(missing.status, 404);
    }
    assert.equal(await balance(call), before);
    assert.equal(await balance(caller(t, stranger.client)), 5);
  });
});

describe('gists through an OpenAI-compatible endpoint', () => {
  let t: TestApp;
  let llm: LlmStandIn;
  let tenant: TestTenant;
  let call: Call;

  before(async () => {
    llm = await startLlmStandIn();
    t = await buildTestApp({
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: llm.baseUrl,
      LLM_MODEL: 'stand-in-model',
      LLM_TIMEOUT_MS: '2000',
    });
    tenant = await createTenant(t.app);
    call = caller(t, tenant.client);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: 100 });
  });
  after(async () => {
    await t.close();
    await llm.close();
  });

  test('ten parallel misses call the model once, cost 1 FUEL and return one gist id', async () => {
    const { body } = await call('POST', '/crm/contacts', {
      email: 'parallel@example.com',
      full_name: 'Par Allel',
    });
    llm.delayMs = 300;
    const calls = llm.calls;
    const start = await balance(call);
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => call('POST', `/ai/contacts/${body.contact.id}/gist`)),
    );
    llm.delayMs = 0;
    assert.deepEqual(
      replies.map((reply) => reply.status),
      Array(10).fill(200),
    );
    assert.equal(new Set(replies.map((reply) => reply.body.gist.id)).size, 1);
    assert.equal(replies.filter((reply) => reply.body.gist.fuel_cost === 1).length, 1);
    assert.equal(
      replies.filter((reply) => reply.body.gist.cached && reply.body.gist.fuel_cost === 0).length,
      9,
    );
    assert.equal(llm.calls - calls, 1);
    assert.equal(await balance(call), start - 1);
    assert.equal(await gistRows(t, body.contact.id), 1);
    assert.equal(replies[0].body.gist.model, 'stand-in-model');

    // Forced in parallel too: one generation, one charge.
    llm.delayMs = 300;
    const forced = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', `/ai/contacts/${body.contact.id}/gist?force=true`)),
    );
    llm.delayMs = 0;
    assert.equal(new Set(forced.map((reply) => reply.body.gist.id)).size, 1);
    assert.equal(llm.calls - calls, 2);
    assert.equal(await balance(call), start - 2);
  });

  test('a model failure is 502 ai_unavailable, its debit refunded; the next request generates', async () => {
    const { body } = await call('POST', '/crm/contacts', { email: 'fail@example.com' });
    const start = await balance(call);
    llm.status = 500;
    const failed = await call('POST', `/ai/contacts/${body.contact.id}/gist`);
    llm.status = 200;
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error, 'ai_unavailable');
    assert.match(failed.body.message, /No FUEL was spent/);
    assert.equal(await balance(call), start);
    const entries = await gistLedger(call);
    const refunded = entries.filter((entry: any) => entry.reason === 'refund');
    assert.equal(refunded.length, 1);
    assert.ok(entries.some((e: any) => e.reason === 'gist' && e.reference_id === refunded[0].reference_id));

    const ok = await call('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.gist.cached, false);
    assert.equal(await balance(call), start - 1);
  });

  test('the simulator failure switch is 404 with this provider, and model calls are not failed', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/simulator/llm/failures',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { count: 1 },
    });
    assert.equal(response.statusCode, 404);
    const body = response.json();
    assert.equal(body.error, 'not_found');
    assert.match(body.message, /LLM_PROVIDER is not builtin/);
    const { body: created } = await call('POST', '/crm/contacts', { email: 'switch@example.com' });
    assert.equal((await call('POST', `/ai/contacts/${created.contact.id}/gist`)).status, 200);
  });

  test('a model that times out is 502 and costs nothing', async () => {
    const { body } = await call('POST', '/crm/contacts', { email: 'slow@example.com' });
    const start = await balance(call);
    llm.delayMs = 3000;
    const slow = await call('POST', `/ai/contacts/${body.contact.id}/gist`);
    llm.delayMs = 0;
    assert.equal(slow.status, 502);
    assert.equal(slow.body.error, 'ai_unavailable');
    assert.equal(await balance(call), start);
  });

  test('a claim left by a process that died is given up (refunded) after its lease', async () => {
    const { body } = await call('POST', '/crm/contacts', { email: 'dead@example.com' });
    const start = await balance(call);
    const scope = { orgId: tenant.orgId, clientId: tenant.clientId };
    // What a process killed between its claim and the model's answer leaves behind.
    const deadClaim = async () => {
      const id = newId();
      await inTransaction(t.platform.db, async (trx) => {
        await sql`INSERT INTO gists (id, org_id, client_id, subject_type, subject_id, source_hash, generator,
                    status, fuel_cost, lease_until)
                  VALUES (${id}, ${tenant.orgId}, ${tenant.clientId}, 'contact', ${body.contact.id}, 'x', 'y',
                    'generating', 1, now() - interval '1 second')`.execute(trx);
        await debitFuel(trx, scope, { reason: 'gist', amount: 1, referenceType: 'gist', referenceId: id });
      });
      return id;
    };
    await deadClaim();
    assert.equal(await balance(call), start - 1);
    const reply = await call('POST', `/ai/contacts/${body.contact.id}/gist`);
    assert.equal(reply.status, 200);
    assert.equal(reply.body.gist.cached, false);
    assert.equal(await balance(call), start - 1, 'the dead claim was refunded, the new gist paid');

    // Nobody asks again: the sweeper gives it up.
    const other = await call('POST', '/crm/contacts', { email: 'swept@example.com' });
    const swept = newId();
    await inTransaction(t.platform.db, async (trx) => {
      await sql`INSERT INTO gists (id, org_id, client_id, subject_type, subject_id, source_hash, generator,
                  status, fuel_cost, lease_until)
                VALUES (${swept}, ${tenant.orgId}, ${tenant.clientId}, 'contact', ${other.body.contact.id}, 'x',
                  'y', 'generating', 1, now() - interval '1 second')`.execute(trx);
      await debitFuel(trx, scope, { reason: 'gist', amount: 1, referenceType: 'gist', referenceId: swept });
    });
    assert.equal(await balance(call), start - 2);
    const [first, second] = await Promise.all([
      sweepExpiredClaims(t.platform.db),
      sweepExpiredClaims(t.platform.db),
    ]);
    assert.equal(first + second, 1, 'two sweepers at once give the claim up once');
    assert.equal(await balance(call), start - 1);
  });
});
