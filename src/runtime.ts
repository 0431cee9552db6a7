import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { buildFeedApp } from './feed/app.ts';
import { jobRegistry } from './jobs.ts';
import { seedDemo } from './modules/admin/seed.ts';
import { createPlatform, listenForKeyChanges, type Platform } from './platform/context.ts';
import { startEmbeddedPostgres } from './platform/db/embedded.ts';
import { migrate } from './platform/db/migrate.ts';
import { type DatabaseHandle, openDatabase } from './platform/db/pool.ts';
import { startWorker, type Worker } from './platform/jobs/runner.ts';
import { loadSecrets } from './platform/secrets.ts';

export type Role = 'api' | 'worker' | 'feed';
export const ALL_ROLES: Role[] = ['api', 'worker', 'feed'];

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        '*.authorization',
        'key',
        '*.key',
        'secret',
        '*.secret',
        'token',
        '*.token',
        'password',
        '*.password',
        'adminToken',
      ],
      censor: '[redacted]',
    },
  });
}

interface Database {
  handle: DatabaseHandle;
  stopEmbedded: (() => Promise<void>) | null;
}

/** The configured PostgreSQL, or the embedded one in `DATA_DIR` when `DATABASE_URL` is unset. */
export async function connectDatabase(config: Config, log: Logger, poolSize = 20): Promise<Database> {
  if (config.databaseUrl) {
    return { handle: openDatabase(config.databaseUrl, { max: poolSize }), stopEmbedded: null };
  }
  const password = await embeddedPassword(config.dataDir);
  const embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'postgres'), {
    password,
    log: (line) => log.debug({ component: 'postgres' }, line),
  });
  log.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  return { handle: openDatabase(embedded.url, { max: poolSize }), stopEmbedded: embedded.stop };
}

async function embeddedPassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres-password');
  const existing = await fs.readFile(file, 'utf8').catch(() => null);
  if (existing?.trim()) return existing.trim();
  await fs.mkdir(dataDir, { recursive: true });
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

export interface Service {
  platform: Platform;
  api: FastifyInstance | null;
  feed: FastifyInstance | null;
  worker: Worker | null;
  stop(): Promise<void>;
}

/** Starts the given roles in this process against one database. */
export async function startService(
  config: Config,
  roles: Role[],
  log = createLogger(config),
): Promise<Service> {
  const database = await connectDatabase(config, log);
  const stops: Array<() => Promise<void>> = [];
  try {
    await migrate(database.handle);
    const secrets = await loadSecrets(config);
    const redis = config.redisUrl
      ? new Redis(config.redisUrl, {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          connectTimeout: 2000,
        })
      : null;
    const platform = createPlatform(config, database.handle, secrets, redis, log);

    if (config.seedDemo) await printFirstStart(platform);

    let api: FastifyInstance | null = null;
    let feed: FastifyInstance | null = null;
    let worker: Worker | null = null;

    if (roles.includes('api')) {
      const listener = await listenForKeyChanges(platform);
      stops.push(() => listener.stop());
      api = await buildApp(platform);
      await api.listen({ port: config.port, host: config.host });
      stops.push(() => api!.close());
      log.info({ url: `http://${config.host}:${config.port}/v1` }, 'api listening');
    }
    if (roles.includes('feed')) {
      feed = await buildFeedApp(platform);
      await feed.listen({ port: config.feedPort, host: config.host });
      stops.push(() => feed!.close());
      log.info({ url: `http://${config.host}:${config.feedPort}` }, 'feed listening');
    }
    if (roles.includes('worker')) {
      worker = await startWorker(database.handle, jobRegistry(platform), log, {
        concurrency: config.workerConcurrency,
      });
      stops.push(() => worker!.stop());
      log.info('worker running');
    }

    let stopping: Promise<void> | null = null;
    return {
      platform,
      api,
      feed,
      worker,
      // HTTP servers stop taking requests and drain, then running jobs finish, then the database goes.
      stop: () => {
        stopping ??= (async () => {
          for (const stop of stops) await stop().catch((error) => log.error({ err: error }, 'stop failed'));
          redis?.disconnect();
          await database.handle.close();
          await database.stopEmbedded?.();
        })();
        return stopping;
      },
    };
  } catch (error) {
    for (const stop of stops) await stop().catch(() => {});
    await database.handle.close().catch(() => {});
    await database.stopEmbedded?.().catch(() => {});
    throw error;
  }
}

export async function runMigrations(config: Config, log = createLogger(config)): Promise<string[]> {
  const database = await connectDatabase(config, log, 2);
  try {
    return await migrate(database.handle);
  } finally {
    await database.handle.close();
    await database.stopEmbedded?.();
  }
}

async function printFirstStart(platform: Platform): Promise<void> {
  const demo = await seedDemo(platform.db);
  const lines: string[] = [];
  if (demo) {
    lines.push(
      'Created a demo agency with one client. These keys are shown once:',
      `  agency key: ${demo.agencyKey}`,
      `  client key: ${demo.clientKey}   (client ${demo.clientId})`,
    );
  }
  if (platform.secrets.adminTokenCreated) {
    lines.push(
      `  admin token: ${platform.secrets.adminToken}   (saved in ${path.join(platform.config.dataDir, 'admin-token')})`,
    );
  }
  if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n\n`);
}
