import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller } from '../crm/crm-client.ts';
import { type LlmStandIn, startLlmStandIn } from '../gists/llm-stand-in.ts';
import { adminCall, buildTestApp, createTenant, type TestApp, testEnv } from '../helpers.ts';
import { type Fleet, killMidWork, startWorkers } from './takeover.ts';

/** Twice the jobs a worker claims at once (`BATCH` in run.ts). */
const JOBS = 16;
const GRANT = 100;

/**
 * Two worker processes run pre-call briefs through the OpenAI-compatible adapter against a stand-in
 * model that holds every answer; one worker is killed with SIGKILL mid-call. The survivor's calls are
 * then answered; the dead worker's jobs stay `running` until their lease is over, and the survivor
 * claims and writes them. Every job ends completed with one event and one FUEL debit, none refunded,
 * none stuck.
 */
describe('kill -9 of a worker in the middle of AI jobs', () => {
  let t: TestApp;
  let model: LlmStandIn;
  let fleet: Fleet | null = null;

  before(async () => {
    model = await startLlmStandIn();
    model.holding = true;
  });
  after(async () => {
    await fleet?.stop();
    await model?.close();
    await t?.close();
  });

  test('the dead worker’s jobs are written by the survivor after their lease, each once, paid once', {
    timeout: 180_000,
  }, async () => {
    const env = {
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: model.baseUrl,
      LLM_TIMEOUT_MS: '120000',
      AI_JOB_POLL: '50ms',
      AI_JOB_LEASE: '5s',
    };
    t = await buildTestApp(env);
    const tenant = await createTenant(t.app);
    const call = caller(t, tenant.client);
    await adminCall(t.app, 'POST', `/orgs/${tenant.orgId}/fuel`, { amount: GRANT });
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const { body } = await call('POST', '/crm/contacts', { email: `k${i}@kill.example` });
      const asked = await call('POST', `/ai/contacts/${body.contact.id}/precall-brief`, {});
      assert.equal(asked.status, 202, JSON.stringify(asked.body));
      ids.push(asked.body.job.id);
    }

    fleet = await startWorkers(2, testEnv(t.database.url, env));
    await killMidWork(fleet, async () => model.held() === JOBS);
    // The dead worker's calls are cut at once, all together; the survivor's are still held.
    await fleet.tookOver(async () => model.cut > 0, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cut = model.cut;
    assert.ok(cut < JOBS, 'the survivor holds some jobs too');
    model.release();

    const pool = t.database.pool;
    await fleet.tookOver(async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ai_jobs WHERE org_id = $1 AND status = 'completed'`,
        [tenant.orgId],
      );
      return rows[0].n === JOBS;
    }, 60_000);

    const { rows: jobs } = await pool.query<{
      id: string;
      attempts: number;
      lease_until: Date | null;
      completions: number;
      debits: number;
      refunds: number;
    }>(
      `SELECT j.id, j.attempts, j.lease_until,
         (SELECT count(*)::int FROM events e
          WHERE e.type = 'ai.precall_brief.completed' AND e.data->>'id' = j.id::text) AS completions,
         (SELECT count(*)::int FROM fuel_ledger f
          WHERE f.reference_id = j.id::text AND f.reason = 'ai_job') AS debits,
         (SELECT count(*)::int FROM fuel_ledger f
          WHERE f.reference_id = j.id::text AND f.reason = 'refund') AS refunds
       FROM ai_jobs j WHERE j.org_id = $1`,
      [tenant.orgId],
    );
    assert.equal(jobs.length, JOBS);
    for (const job of jobs)
      assert.deepEqual(
        {
          completions: job.completions,
          debits: job.debits,
          refunds: job.refunds,
          lease_until: job.lease_until,
        },
        { completions: 1, debits: 1, refunds: 0, lease_until: null },
        job.id,
      );
    assert.equal(
      jobs.filter((job) => job.attempts === 2).length,
      cut,
      'the dead worker’s jobs were claimed twice, the others once',
    );
    assert.equal(jobs.filter((job) => job.attempts === 1).length, JOBS - cut);
    assert.equal(model.calls, JOBS + cut, 'one more model call per job the dead worker held');
    const { body } = await caller(t, tenant.agency)('GET', '/fuel');
    assert.equal(body.fuel.balance, GRANT - JOBS);
  });
});
