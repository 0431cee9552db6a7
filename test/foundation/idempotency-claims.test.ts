import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { emit } from '../../src/platform/events/emit.ts';
import { errors } from '../../src/platform/http/errors.ts';
import { runIdempotent } from '../../src/platform/http/idempotency.ts';
import { Body, IdempotencyHeaders } from '../../src/platform/http/schemas.ts';
import { buildTestApp, createTenant, eventually, type TestApp, type TestTenant } from '../helpers.ts';

/** Requests that wait at a named gate inside their transaction until the test opens it. */
class Gates {
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly opened = new Set<string>();
  running = 0;
  mostAtOnce = 0;

  async pass(name: string): Promise<void> {
    this.running += 1;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
    if (this.opened.has(name)) return;
    await new Promise<void>((resolve) =>
      this.waiting.set(name, [...(this.waiting.get(name) ?? []), resolve]),
    );
  }

  left(): void {
    this.running -= 1;
  }

  waitingAt(name: string): number {
    return this.waiting.get(name)?.length ?? 0;
  }

  open(name: string): void {
    this.opened.add(name);
    for (const resolve of this.waiting.get(name) ?? []) resolve();
    this.waiting.delete(name);
  }
}

const gates = new Gates();

const gatedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/gated-widgets',
    {
      schema: {
        hide: true,
        headers: IdempotencyHeaders,
        body: Body({ gate: Type.String(), fail: Type.Optional(Type.Boolean()) }),
      },
    },
    async (request, reply) =>
      runIdempotent(app.platform.db, request, reply, 24, async (trx) => {
        const event = await emit(trx, request.tenant, 'test.widget.created', { gate: request.body.gate });
        try {
          await gates.pass(request.body.gate);
        } finally {
          gates.left();
        }
        if (request.body.fail) throw errors.invalidField('gate', 'failed on purpose');
        return { status: 201, body: { id: event.id } };
      }),
  );
};

describe('idempotency claims', () => {
  let t: TestApp;
  let tenant: TestTenant;

  before(async () => {
    t = await buildTestApp({}, { extraTenantRoutes: [gatedRoutes] });
    tenant = await createTenant(t.app);
  });
  after(() => t.close());

  const post = (key: string, body: { gate: string; fail?: boolean }) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/gated-widgets',
      headers: { ...tenant.agency, 'idempotency-key': key },
      payload: body,
    });
  const committed = async (gate: string) => {
    const { rows } = await t.database.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'test.widget.created' AND org_id = $1 AND data->>'gate' = $2`,
      [tenant.orgId, gate],
    );
    return rows[0].n as number;
  };
  /** What the clock does to a claim while its request runs long: it grows older than any lease. */
  const ageClaims = () =>
    t.database.pool.query(
      `UPDATE idempotency_keys SET locked_at = date_trunc('milliseconds', now() - interval '1 hour') WHERE org_id = $1 AND state = 'in_progress'`,
      [tenant.orgId],
    );
  const within = <T>(ms: number, promise: Promise<T>, what: string) =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms),
      ),
    ]);

  test('a request that runs past any lease keeps its key: a retry answers 409 and never runs the work again', async () => {
    const body = { gate: 'long-1' };
    const first = post('long-1', body);
    await eventually(async () => gates.waitingAt('long-1') === 1);
    await ageClaims();
    try {
      const retry = await within(5000, post('long-1', body), 'the retry');
      assert.equal(retry.statusCode, 409);
      assert.equal(retry.json().error, 'idempotency_in_progress');
      assert.ok(Number(retry.headers['retry-after']) >= 1, 'a 409 says when to retry');
    } finally {
      gates.open('long-1');
    }
    assert.equal((await first).statusCode, 201);
    assert.equal(gates.mostAtOnce, 1, 'one key never runs twice at once');
    const replay = await post('long-1', body);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(await committed('long-1'), 1);
  });

  test('a request that fails while a retry waits leaves nothing behind: the key runs afresh, once', async () => {
    const body = { gate: 'long-2', fail: true };
    const first = post('long-2', body);
    await eventually(async () => gates.waitingAt('long-2') === 1);
    await ageClaims();
    const answered = await within(5000, post('long-2', body), 'the retry').catch(() => null);
    gates.open('long-2');
    assert.equal((await first).statusCode, 400);
    assert.equal(answered?.statusCode, 409, 'the retry was told the first still runs');
    assert.equal(gates.mostAtOnce, 1, 'one key never runs twice at once');
    assert.equal(await committed('long-2'), 0);

    const again = await post('long-2', { gate: 'long-2' });
    assert.equal(again.statusCode, 201, 'a failed request frees its key at once');
    assert.equal((await post('long-2', { gate: 'long-2' })).headers['idempotent-replayed'], 'true');
    assert.equal(await committed('long-2'), 1);
  });
});
