import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { buildTestApp, createTenant, eventually, type TestApp, type TestTenant } from '../helpers.ts';
import { type Receiver, startReceiver } from '../webhooks/receiver.ts';

const METRICS_TOKEN = 'metrics-token-for-tests';

/** The series the issue names, each documented in docs/pages/platform/metrics.md. */
const FAMILIES = [
  'process_cpu_user_seconds_total',
  'http_requests_total',
  'http_request_duration_seconds',
  'events_written_total',
  'events_dispatched_total',
  'events_outbox_lag_seconds',
  'webhook_attempts_total',
  'webhook_delivery_latency_seconds',
  'worker_jobs_total',
  'worker_loop_runs_total',
  'worker_queue_depth',
  'worker_heartbeat_age_seconds',
  'db_pool_connections',
  'db_pool_waiting_requests',
  'database_up',
];

describe('GET /metrics', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let receiver: Receiver;

  before(async () => {
    t = await buildTestApp({ METRICS_TOKEN, OUTBOUND_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(t.app);
    receiver = await startReceiver();
    await t.startWorker();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const scrape = async (): Promise<MetricFamily[]> => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parsePrometheusTextFormat(response.body);
  };
  const family = (families: MetricFamily[], name: string) => families.find((item) => item.name === name);
  /** One series per label set (a histogram's buckets belong to its series); the Node runtime's own vary with what it happens to do. */
  // The worker runs in this process: a loop, task or delivery outcome seen for the first time adds a series, bounded
  // by the code's own names. Only the series requests can add are counted; the id check below covers every family.
  const BACKGROUND = /^(nodejs_|worker_|webhook_|events_(dispatched|relay))/;
  const serviceSeries = (families: MetricFamily[]) =>
    families
      .filter((item) => !BACKGROUND.test(item.name))
      .reduce((sum, item) => sum + item.metrics.length, 0);

  test('bearer METRICS_TOKEN when it is set', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-of-some-length', `Basic ${METRICS_TOKEN}`]) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error, 'unauthorized');
    }
  });

  test('Prometheus text, every series of the list, the work of the API and the worker in it', async () => {
    const { secret } = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: tenant.agency,
        payload: { url: `${receiver.url}/hooks`, events: ['contact.created'] },
      })
    ).json();
    assert.ok(secret);
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/crm/contacts',
      headers: tenant.agency,
      payload: { email: 'metrics@example.com' },
    });
    assert.equal(created.statusCode, 201);
    await eventually(async () => receiver.requests.length > 0, 20_000);

    const families = await eventually(async () => {
      const scraped = await scrape();
      const attempts = family(scraped, 'webhook_attempts_total')?.metrics ?? [];
      return attempts.some((sample) => sample.labels?.outcome === 'succeeded') ? scraped : undefined;
    }, 10_000);
    for (const name of FAMILIES) assert.ok(family(families, name), `${name} is served`);

    const requests = family(families, 'http_requests_total')?.metrics ?? [];
    const create = requests.find(
      (sample) => sample.labels?.route === '/v1/crm/contacts' && sample.labels?.method === 'POST',
    );
    assert.equal(create?.labels?.status_class, '2xx');
    assert.ok(Number(create?.value) >= 1);
    const written = family(families, 'events_written_total')?.metrics ?? [];
    assert.ok(written.some((sample) => sample.labels?.type === 'contact.created'));
    assert.ok(Number(family(families, 'events_dispatched_total')?.metrics[0].value) >= 1);
    assert.equal(family(families, 'database_up')?.metrics[0].value, '1');
    const pool = family(families, 'db_pool_connections')?.metrics ?? [];
    assert.deepEqual(pool.map((sample) => sample.labels?.state).sort(), ['idle', 'in_use']);
  });

  test('series stay bounded: 1,000 requests to 1,000 different contact ids add none', async () => {
    const get = (id: string) =>
      t.app.inject({ method: 'GET', url: `/v1/crm/contacts/${id}`, headers: tenant.agency });
    assert.equal((await get(randomUUID())).statusCode, 404);
    const before = await scrape();
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    for (let start = 0; start < ids.length; start += 50)
      await Promise.all(
        ids.slice(start, start + 50).map(async (id) => assert.equal((await get(id)).statusCode, 404)),
      );
    const after = await scrape();
    assert.equal(serviceSeries(after), serviceSeries(before));
    const text = JSON.stringify(after);
    for (const id of ids.slice(0, 50)) assert.ok(!text.includes(id), 'no id in any label');
    assert.ok(!text.includes(tenant.orgId), 'no tenant in any label');
    const reads = family(after, 'http_requests_total')?.metrics.find(
      (sample) => sample.labels?.route === '/v1/crm/contacts/:id' && sample.labels?.status_class === '4xx',
    );
    assert.ok(Number(reads?.value) >= 1001, 'counted under the route pattern');
  });
});

describe('GET /readyz reports the worker, the outbox and the rate-limit store', () => {
  test('the last heartbeat, the outbox lag and where the counters live', async () => {
    const t = await buildTestApp();
    try {
      const early = (await t.app.inject({ method: 'GET', url: '/readyz' })).json();
      assert.equal(early.status, 'ready');
      assert.deepEqual(early.worker, { last_heartbeat_at: null, heartbeat_age_seconds: null });
      assert.deepEqual(early.rate_limits, { store: 'in_process', reachable: true, enforced: true });
      assert.equal(early.outbox.lag_seconds, 0);

      await t.startWorker();
      const ready = await eventually(async () => {
        const body = (await t.app.inject({ method: 'GET', url: '/readyz' })).json();
        return body.worker.last_heartbeat_at ? body : undefined;
      });
      assert.ok(ready.worker.heartbeat_age_seconds >= 0 && ready.worker.heartbeat_age_seconds < 30);
      assert.deepEqual(ready.checks, { database: 'ok', migrations: 'ok', rate_limits: 'ok' });
    } finally {
      await t.close();
    }
  });
});
