import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { jobRegistry } from '../src/jobs.ts';
import { listenForKeyChanges, type Platform } from '../src/platform/context.ts';
import { type DatabaseHandle, openDatabase } from '../src/platform/db/pool.ts';
import { connectRateLimitStore } from '../src/platform/http/rate-limit.ts';
import { startWorker, type Worker } from '../src/platform/jobs/runner.ts';
import { loadSecrets } from '../src/platform/secrets.ts';
import { closeProviders } from '../src/providers/index.ts';
import { buildPlatform } from '../src/wiring.ts';

export const ADMIN_TOKEN = 'test-admin-token';
export const ENCRYPTION_KEY = randomBytes(32).toString('base64');

function server(): { url: string; template: string } {
  const url = process.env.TEST_SERVER_URL;
  const template = process.env.TEST_TEMPLATE_DB;
  if (!url || !template) throw new Error('Run the tests with `npm test`: it prepares the test database.');
  return { url, template };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A throwaway database cloned from the migrated template, dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const { url, template } = server();
  const name = `${template.replace('ap_template_', 'ap_test_')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(url, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await client.end();
    },
  };
}

/** The environment of a service under test; `overrides` shorten intervals and the like. */
export function testEnv(databaseUrl: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DATA_DIR: path.join(os.tmpdir(), `ap-test-${randomBytes(4).toString('hex')}`),
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SEED_DEMO: 'false',
    ...overrides,
  };
}

/**
 * The service log of an app under test. `npm test` collects it in TEST_SERVICE_LOG_DIR, at debug
 * level, and scans it for keys and secrets after the suite (see test/log-scan.ts); TEST_LOG_LEVEL
 * sends it to stdout at that level instead.
 */
export function serviceLog(level: string): pino.Logger {
  const dir = process.env.TEST_SERVICE_LOG_DIR;
  if (!dir || process.env.TEST_LOG_LEVEL) return pino({ level });
  return pino(
    { level: 'debug' },
    pino.destination({ dest: path.join(dir, `${process.pid}.log`), append: true, mkdir: true, sync: true }),
  );
}

export interface TestApp {
  app: FastifyInstance;
  platform: Platform;
  config: Config;
  database: DatabaseHandle;
  /** Starts the job worker against the same database (stopped by close). */
  startWorker(): Promise<Worker>;
  close(): Promise<void>;
}

/** The whole API on a fresh database, driven with `app.inject()`. */
export async function buildTestApp(
  overrides: Record<string, string> = {},
  options: { extraTenantRoutes?: FastifyPluginAsync[] } = {},
): Promise<TestApp> {
  const testDb = await createTestDatabase();
  const config = loadConfig(testEnv(testDb.url, overrides));
  // Files run two at a time on one server, some with service processes of their own, within its
  // max_connections (100 by default); a test waits for a connection rather than failing on the
  // production connect time-out when 500 transactions queue for 20 connections.
  const database = openDatabase(testDb.url, { max: 20, connectTimeoutMs: 30_000 });
  const log = serviceLog(config.logLevel);
  const redis = await connectRateLimitStore(config, log);
  const platform = await buildPlatform(config, database, await loadSecrets(config), redis, log);
  const listener = await listenForKeyChanges(platform);
  const app = await buildApp(platform, options);
  await app.ready();
  const workers: Worker[] = [];
  return {
    app,
    platform,
    config,
    database,
    startWorker: async () => {
      const runner = await startWorker(database, jobRegistry(platform), log, {
        concurrency: 4,
        pollInterval: 200,
        staleAfterMs: config.workerStaleAfterMs,
      });
      workers.push(runner);
      return runner;
    },
    close: async () => {
      for (const worker of workers) await worker.stop();
      await app.close();
      await listener.stop();
      await closeProviders(platform.providers);
      redis?.disconnect();
      await database.close();
      await testDb.drop();
    },
  };
}

export interface TestTenant {
  orgId: string;
  houseClientId: string;
  clientId: string;
  agencyKey: string;
  clientKey: string;
  /** Headers for the agency key acting as itself (the house client). */
  agency: Record<string, string>;
  /** Headers for the client-bound key. */
  client: Record<string, string>;
  /** Headers for the agency key acting as the client through X-Service-Client-Id. */
  agencyAsClient: Record<string, string>;
}

export async function adminCall<T = any>(
  app: FastifyInstance,
  method: string,
  url: string,
  payload?: unknown,
): Promise<T> {
  const response = await app.inject({
    method: method as 'POST',
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  if (response.statusCode >= 300)
    throw new Error(`admin ${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.body ? response.json() : (undefined as T);
}

/** An org with one extra client, an agency key and a client key. */
export async function createTenant(
  app: FastifyInstance,
  options: { rateLimit?: number } = {},
): Promise<TestTenant> {
  const { org } = await adminCall(app, 'POST', '/orgs', { name: `Agency ${randomBytes(3).toString('hex')}` });
  const { client } = await adminCall(app, 'POST', `/orgs/${org.id}/clients`, { name: 'Client A' });
  const limit = options.rateLimit ?? 100_000;
  const agency = await adminCall(app, 'POST', `/orgs/${org.id}/keys`, {
    name: 'agency',
    kind: 'agency',
    rate_limit_per_minute: limit,
  });
  const clientKey = await adminCall(app, 'POST', `/orgs/${org.id}/keys`, {
    name: 'client',
    kind: 'client',
    client_id: client.id,
    rate_limit_per_minute: limit,
  });
  return {
    orgId: org.id,
    houseClientId: org.house_client_id,
    clientId: client.id,
    agencyKey: agency.key,
    clientKey: clientKey.key,
    agency: { authorization: `Bearer ${agency.key}` },
    client: { authorization: `Bearer ${clientKey.key}` },
    agencyAsClient: { authorization: `Bearer ${agency.key}`, 'x-service-client-id': client.id },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  stepMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    await sleep(stepMs);
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${last}` : ''}`);
}
