import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.ts';
import { type Config, publicUrl } from './config.ts';
import { buildFeedApp } from './feed/app.ts';
import { jobRegistry } from './jobs.ts';
import { buildStatusApp } from './modules/health/app.ts';
import { webhookSecretColumn } from './modules/webhooks/signing.ts';
import { listenForKeyChanges, type Platform } from './platform/context.ts';
import { startEmbeddedPostgres } from './platform/db/embedded.ts';
import { migrate } from './platform/db/migrate.ts';
import { type DatabaseHandle, openDatabase } from './platform/db/pool.ts';
import { connectRateLimitStore } from './platform/http/rate-limit.ts';
import { startWorker, type Worker } from './platform/jobs/runner.ts';
import { type Reencrypted, reencrypt, type SealedColumn } from './platform/sealed-columns.ts';
import { loadSecrets } from './platform/secrets.ts';
import { closeProviders } from './providers/index.ts';
import { seedDemo } from './seed/demo.ts';
import { buildPlatform } from './wiring.ts';

export type Role = 'api' | 'worker' | 'feed';

/** Every column of secrets sealed at rest; a module that seals one adds it here. */
const SEALED_COLUMNS: SealedColumn[] = [webhookSecretColumn];
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
        '*.current_password',
        '*.new_password',
        '*.password_hash',
        'adminToken',
      ],
      censor: '[redacted]',
    },
  });
}

interface Database {
  handle: DatabaseHandle;
  stopEmbedded: (() => Promise<void>) | null;
  /** True on the very first start of the embedded database in `DATA_DIR`. */
  createdEmbedded: boolean;
}

/** The configured PostgreSQL, or the embedded one in `DATA_DIR` when `DATABASE_URL` is unset. */
export async function connectDatabase(
  config: Config,
  log: Logger,
  command: string,
  poolSize = config.databasePoolMax,
): Promise<Database> {
  const poolOptions = {
    max: poolSize,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    // pg_stat_activity then tells which process holds a connection, a lock or a long transaction.
    applicationName: `agency-platform ${command} ${process.pid}`,
  };
  if (config.databaseUrl) {
    return {
      handle: openDatabase(config.databaseUrl, poolOptions),
      stopEmbedded: null,
      createdEmbedded: false,
    };
  }
  const password = await embeddedPassword(config.dataDir);
  const embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'postgres'), {
    password,
    log: (line) => log.debug({ component: 'postgres' }, line),
    warn: (message) => log.warn({ dataDir: config.dataDir }, message),
  });
  log.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  return {
    handle: openDatabase(embedded.url, poolOptions),
    stopEmbedded: embedded.stop,
    createdEmbedded: embedded.created,
  };
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
  /** When a stop takes too long: stops the embedded PostgreSQL at once, leaving the rest to the exit. */
  kill(): Promise<void>;
}

/** Starts the given roles in this process against one database. */
export async function startService(
  config: Config,
  roles: Role[],
  log = createLogger(config),
): Promise<Service> {
  const secrets = await loadSecrets(config);
  const database = await connectDatabase(config, log, roles.join('+'));
  const stops: Array<() => Promise<void>> = [];
  try {
    await migrate(database.handle);
    const redis = await connectRateLimitStore(config, log);
    const platform = await buildPlatform(config, database.handle, secrets, redis, log);

    await firstStart(platform, database.createdEmbedded);

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
        staleAfterMs: config.workerStaleAfterMs,
      });
      stops.push(() => worker!.stop());
      log.info('worker running');
    }
    if (config.metricsPort) {
      const status = await buildStatusApp(platform);
      await status.listen({ port: config.metricsPort, host: config.host });
      stops.push(() => status.close());
      log.info({ url: `http://${config.host}:${config.metricsPort}/metrics` }, 'metrics listening');
    }

    let stopping: Promise<void> | null = null;
    return {
      platform,
      api,
      feed,
      worker,
      // HTTP servers stop taking requests and drain, then running jobs finish, then the providers
      // (pooled SMTP connections) and the database go.
      stop: () => {
        stopping ??= (async () => {
          for (const stop of stops) await stop().catch((error) => log.error({ err: error }, 'stop failed'));
          await closeProviders(platform.providers).catch((error) => log.error({ err: error }, 'stop failed'));
          redis?.disconnect();
          await database.handle.close();
          await database.stopEmbedded?.();
        })();
        return stopping;
      },
      kill: async () => {
        await database.stopEmbedded?.();
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
  const database = await connectDatabase(config, log, 'migrate', 2);
  try {
    return await migrate(database.handle);
  } finally {
    await database.handle.close();
    await database.stopEmbedded?.();
  }
}

/**
 * The demo agency (when `SEED_DEMO` is on) and the generated admin token. Their secrets are printed
 * only where a person reads them: on a terminal, or on the very first start of the embedded database
 * (stdout is then a developer's console, not yet a log store). The admin token is generated, and so
 * printed, once.
 */
async function firstStart(platform: Platform, createdEmbedded: boolean): Promise<void> {
  const { config, secrets, log } = platform;
  const demo = config.seedDemo ? await seedDemo(platform.db) : null;
  const print = process.stdout.isTTY === true || createdEmbedded;
  const tokenFile = path.join(config.dataDir, 'admin-token');
  if (!print) {
    if (demo)
      log.warn(
        { orgId: demo.orgId },
        'demo agency created; its keys are not printed where stdout is not a terminal, nor its portal passwords: mint keys and invite users with the admin API',
      );
    if (secrets.adminTokenCreated)
      log.warn({ file: tokenFile }, 'admin token generated; read it from the file');
    return;
  }
  const lines: string[] = [];
  if (demo) {
    lines.push(
      'Created a demo agency with one client. These keys and passwords are shown once:',
      `  agency key: ${demo.agencyKey}`,
      `  client key: ${demo.clientKey}   (client ${demo.clientId})`,
      `The portal: ${publicUrl(config, '/portal/sign-in')}`,
      `  owner:       ${demo.owner.email}   password: ${demo.owner.password}`,
      `  client user: ${demo.clientUser.email}   password: ${demo.clientUser.password}`,
    );
  }
  if (secrets.adminTokenCreated) lines.push(`  admin token: ${secrets.adminToken}   (saved in ${tokenFile})`);
  if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

/** `npm start -- rotate-keys`: re-seals every secret at rest under the first key of `ENCRYPTION_KEYS`. */
export async function rotateKeys(config: Config, log = createLogger(config)): Promise<Reencrypted[]> {
  const secrets = await loadSecrets(config);
  const database = await connectDatabase(config, log, 'rotate-keys', 2);
  try {
    return await reencrypt(database.handle.db, secrets.encryptionKey, SEALED_COLUMNS);
  } finally {
    await database.handle.close();
    await database.stopEmbedded?.();
  }
}
