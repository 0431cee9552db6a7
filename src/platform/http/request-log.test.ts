import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { lazyRequestLogger } from './request-log.ts';

test("a request's logger is built on its first line, bound to the request id, and redacts as the root does", async () => {
  const lines: Record<string, unknown>[] = [];
  const root = pino(
    { level: 'info', redact: ['secret'] },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  let children = 0;
  const child = root.child.bind(root);
  root.child = ((...args: Parameters<typeof root.child>) => {
    children++;
    return child(...args);
  }) as typeof root.child;
  const app = Fastify({
    loggerInstance: root,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
  });
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (request) => {
    request.log.warn({ secret: 'hunter2' }, 'something to say');
    request.log.info('and more');
    return { ok: true };
  });

  await app.ready();
  children = 0;
  assert.equal((await app.inject('/quiet')).statusCode, 200);
  assert.equal(children, 0, 'a request that logs nothing builds no logger');
  assert.equal((await app.inject({ url: '/loud', headers: { 'request-id': 'r-1' } })).statusCode, 200);
  assert.equal(children, 1, 'built once, on the first line');
  const said = lines.filter((line) => line.msg === 'something to say' || line.msg === 'and more');
  assert.equal(said.length, 2);
  for (const line of said) assert.equal(typeof line.reqId, 'string');
  assert.equal(said[0].secret, '[Redacted]');
  await app.close();
});
