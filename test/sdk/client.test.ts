import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  AgencyPlatform,
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InsufficientFuelError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ValidationError,
} from '../../sdk/src/index.ts';
import { adminCall, createTenant } from '../helpers.ts';
import { type FailingProxy, type SdkService, startProxy, startService } from './service.ts';

describe('the SDK against a started service', () => {
  let service: SdkService;
  let client: AgencyPlatform;
  const proxies: FailingProxy[] = [];

  before(async () => {
    service = await startService();
    client = new AgencyPlatform({ apiKey: service.tenant.agencyKey, baseUrl: service.baseUrl });
  });
  after(async () => {
    for (const proxy of proxies) await proxy.close();
    await service.close();
  });

  const proxy = async (decide: Parameters<typeof startProxy>[1]) => {
    const started = await startProxy(service.baseUrl, decide);
    proxies.push(started);
    return started;
  };

  test('resource methods: create, retrieve, update, list, delete, with path ids as leading arguments', async () => {
    const { contact, created } = await client.crm.contacts.create({
      email: 'ana@example.com',
      first_name: 'Ana',
    });
    assert.equal(created, true, 'an envelope that carries more than the resource is returned whole');
    const fetched = await client.crm.contacts.retrieve(contact.id);
    assert.equal(fetched.id, contact.id, 'retrieve returns the contact itself, not {contact}');
    const updated = await client.crm.contacts.update(contact.id, { last_name: 'Lima' });
    assert.equal(updated.last_name, 'Lima');
    const { phone } = await client.crm.contacts.phones.create(contact.id, { phone: '+14155550101' });
    assert.equal((await client.crm.contacts.phones.retrieve(contact.id, phone.id)).id, phone.id);
    const page = await client.crm.contacts.list({ q: 'ana' });
    assert.deepEqual(
      page.data.map((c) => c.id),
      [contact.id],
    );
    assert.equal(await client.crm.contacts.delete(contact.id), undefined);
    assert.equal((await client.crm.contacts.list({ q: 'ana' })).data.length, 0, 'archived');
    const me = await client.me.retrieve();
    assert.equal(me.api_key.kind, 'agency');
  });

  test('forClient acts as the client through X-Service-Client-Id', async () => {
    const asClient = client.forClient(service.tenant.clientId);
    const me = await asClient.me.retrieve();
    assert.equal(me.tenant.client_id, service.tenant.clientId);
    const { contact } = await asClient.crm.contacts.create({ email: 'client-only@example.com' });
    await assert.rejects(client.crm.contacts.retrieve(contact.id), NotFoundError, 'not in the house client');
    assert.equal((await asClient.crm.contacts.retrieve(contact.id)).id, contact.id);
  });

  test('a list walks a tenant of 250 contacts in pages of 50 and sees each once', async () => {
    const tenant = await createTenant(service.t.app);
    const requests: string[] = [];
    const counting: typeof fetch = (input, init) => {
      requests.push(String(input));
      return fetch(input, init);
    };
    const sdk = new AgencyPlatform({ apiKey: tenant.agencyKey, baseUrl: service.baseUrl, fetch: counting });
    const created = new Set<string>();
    for (let i = 0; i < 250; i++) {
      const { contact } = await sdk.crm.contacts.create({ email: `walk${i}@example.com` });
      created.add(contact.id);
    }
    requests.length = 0;
    const seen: string[] = [];
    for await (const contact of sdk.crm.contacts.list({ limit: 50 })) seen.push(contact.id);
    assert.equal(seen.length, 250);
    assert.deepEqual(new Set(seen), created);
    assert.ok(requests.length >= 5 && requests.length <= 6, `${requests.length} pages`);
    assert.ok(requests.every((url) => new URL(url).searchParams.get('limit') === '50'));

    const first = await sdk.crm.contacts.list({ limit: 50 });
    assert.equal(first.data.length, 50);
    assert.equal(first.hasNextPage(), true);
    const second = await first.getNextPage();
    assert.equal(second.data.length, 50);
    assert.notEqual(second.data[0]?.id, first.data[0]?.id);
  });

  test('a 503 on a create is retried with the same Idempotency-Key, and the create happens once', async () => {
    // The first attempt reaches the service (the task is made) but its answer is lost to a 503.
    const failing = await proxy((request, index) =>
      index === 0 && request.method === 'POST' ? { status: 503, afterForwarding: true } : 'forward',
    );
    const tenant = await createTenant(service.t.app);
    const sdk = new AgencyPlatform({ apiKey: tenant.agencyKey, baseUrl: failing.baseUrl });
    const task = await sdk.crm.tasks.create({ title: 'Call Ana back' });
    assert.equal(task.title, 'Call Ana back');
    const posts = failing.requests.filter((r) => r.method === 'POST');
    assert.equal(posts.length, 2, 'retried once');
    const [firstKey, secondKey] = posts.map((r) => r.headers['idempotency-key']);
    assert.ok(firstKey && firstKey === secondKey, 'one generated key, reused by the retry');
    const tasks = await new AgencyPlatform({
      apiKey: tenant.agencyKey,
      baseUrl: service.baseUrl,
    }).crm.tasks.list();
    assert.deepEqual(
      tasks.data.map((t) => t.id),
      [task.id],
      'the create happened once',
    );
  });

  test('a caller-given Idempotency-Key is sent as given', async () => {
    const seen = await proxy(() => 'forward');
    const sdk = new AgencyPlatform({ apiKey: service.tenant.agencyKey, baseUrl: seen.baseUrl });
    const key = `order-${randomUUID()}`;
    const first = await sdk.crm.tasks.create({ title: 'Once' }, { idempotencyKey: key });
    const again = await sdk.crm.tasks.create({ title: 'Once' }, { idempotencyKey: key });
    assert.equal(again.id, first.id, 'the second call replays the first');
    assert.deepEqual(
      seen.requests.map((r) => r.headers['idempotency-key']),
      [key, key],
    );
  });

  test('a 429 waits Retry-After before the retry', async () => {
    const limited = await proxy((_, index) =>
      index === 0
        ? {
            status: 429,
            headers: { 'retry-after': '1' },
            body: JSON.stringify({ error: 'rate_limited', message: 'Slow down' }),
          }
        : 'forward',
    );
    const sdk = new AgencyPlatform({ apiKey: service.tenant.agencyKey, baseUrl: limited.baseUrl });
    const me = await sdk.me.retrieve();
    assert.equal(me.api_key.kind, 'agency');
    assert.equal(limited.requests.length, 2);
    const [first, second] = limited.requests;
    assert.ok(
      second && first && second.at - first.at >= 1000,
      `waited ${second && first && second.at - first.at} ms`,
    );
  });

  test('a 500 is retried for a GET, not for a PATCH; the retries are capped by maxRetries', async () => {
    const broken = await proxy(() => ({ status: 500 }));
    const sdk = new AgencyPlatform({
      apiKey: service.tenant.agencyKey,
      baseUrl: broken.baseUrl,
      maxRetries: 1,
    });
    await assert.rejects(sdk.me.retrieve(), ServerError);
    assert.equal(broken.requests.length, 2, 'a GET: the attempt and one retry');
    broken.requests.length = 0;
    await assert.rejects(sdk.crm.contacts.update(randomUUID(), { first_name: 'X' }), ServerError);
    assert.equal(broken.requests.length, 1, 'a PATCH without an idempotency key is not retried on a 500');
  });

  test('network errors are retried, then end in a ConnectionError', async () => {
    const closed = await proxy(() => 'forward');
    await closed.close();
    let attempts = 0;
    const sdk = new AgencyPlatform({
      apiKey: service.tenant.agencyKey,
      baseUrl: closed.baseUrl,
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const error = await sdk.me.retrieve().catch((e: unknown) => e);
    assert.ok(error instanceof ConnectionError);
    assert.ok(error instanceof ApiError);
    assert.equal(attempts, 3, 'the attempt and the default 2 retries');
  });

  test('an attempt that outlives timeoutMs is retried, then ends in a ConnectionError; an abort is not retried', async () => {
    let attempts = 0;
    const hanging: typeof fetch = (_input, init) => {
      attempts++;
      return new Promise((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      );
    };
    const sdk = new AgencyPlatform({
      apiKey: 'gc_live_x',
      baseUrl: service.baseUrl,
      fetch: hanging,
      timeoutMs: 50,
    });
    const timedOut = await sdk.me.retrieve({ maxRetries: 1 }).catch((e: unknown) => e);
    assert.ok(timedOut instanceof ConnectionError);
    assert.match(timedOut.message, /timed out after 50 ms \(2 attempts\)/);
    assert.equal(attempts, 2);

    attempts = 0;
    const controller = new AbortController();
    const call = sdk.me.retrieve({ signal: controller.signal, timeoutMs: 60_000 });
    controller.abort(new Error('user gave up'));
    await assert.rejects(call, /user gave up/);
    assert.equal(attempts, 1);
  });

  test('each error class is raised by its status, with the code, message and request id', async () => {
    const noRetry = { apiKey: service.tenant.agencyKey, baseUrl: service.baseUrl, maxRetries: 0 };
    const sdk = new AgencyPlatform(noRetry);

    const unauthenticated = await new AgencyPlatform({ ...noRetry, apiKey: 'gc_live_not_a_key' }).me
      .retrieve()
      .catch((e: unknown) => e);
    assert.ok(unauthenticated instanceof AuthenticationError);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.error, 'unauthorized');
    assert.ok(unauthenticated.requestId);

    const forbidden = await new AgencyPlatform({ ...noRetry, apiKey: service.tenant.clientKey }).sdr.campaigns
      .list()
      .catch((e: unknown) => e);
    assert.ok(forbidden instanceof PermissionError);
    assert.equal(forbidden.status, 403);

    const missing = await sdk.crm.contacts.retrieve(randomUUID()).catch((e: unknown) => e);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.error, 'not_found');

    const invalid = await sdk.crm.contacts.create({ email: 'not-an-email' }).catch((e: unknown) => e);
    assert.ok(invalid instanceof ValidationError);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.error, 'validation_error');
    assert.ok(invalid.details);

    await sdk.agents.create({ name: 'Front desk', kind: 'sms', slug: 'front-desk' });
    const taken = await sdk.agents
      .create({ name: 'Other', kind: 'sms', slug: 'front-desk' })
      .catch((e: unknown) => e);
    assert.ok(taken instanceof ConflictError);
    assert.equal(taken.status, 409);

    const tenant = await createTenant(service.t.app);
    await adminCall(service.t.app, 'POST', `/orgs/${tenant.orgId}/numbers`, { number: '+14155550199' });
    const broke = await new AgencyPlatform({ ...noRetry, apiKey: tenant.agencyKey }).sms.messages
      .send({ to: '+14155550123', body: 'Hello' })
      .catch((e: unknown) => e);
    assert.ok(broke instanceof InsufficientFuelError, String(broke));
    assert.equal(broke.status, 402);
    assert.equal(broke.error, 'fuel_exhausted');

    const limitedKey = await adminCall(service.t.app, 'POST', `/orgs/${tenant.orgId}/keys`, {
      name: 'one a minute',
      kind: 'agency',
      rate_limit_per_minute: 1,
    });
    const slow = new AgencyPlatform({ ...noRetry, apiKey: limitedKey.key });
    await slow.me.retrieve();
    const limited = await slow.me.retrieve().catch((e: unknown) => e);
    assert.ok(limited instanceof RateLimitError);
    assert.equal(limited.status, 429);
    assert.ok(limited.retryAfter !== null && limited.retryAfter > 0);
  });
});
