import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createLlmProvider, type LlmProvider } from '../providers/llm/index.ts';
import { createStorageProvider, type StorageProvider } from '../providers/storage/index.ts';
import { ApiKeyStore } from './auth/keys.ts';
import { ClientDirectory } from './auth/tenant.ts';
import { NotificationListener } from './db/notify.ts';
import type { DatabaseHandle, Db } from './db/pool.ts';
import type { Secrets } from './secrets.ts';

/** What every part of a running process shares: configuration, the database, secrets and caches. */
export interface Platform {
  config: Config;
  database: DatabaseHandle;
  db: Db;
  secrets: Secrets;
  keys: ApiKeyStore;
  clients: ClientDirectory;
  redis: Redis | null;
  log: Logger;
  /** Writes AI gists (`LLM_PROVIDER`). */
  llm: LlmProvider;
  /** Object storage of knowledge-base uploads (`STORAGE_PROVIDER`). */
  storage: StorageProvider;
}

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform;
  }
}

export const KEYS_CHANNEL = 'api_keys_changed';

export function createPlatform(
  config: Config,
  database: DatabaseHandle,
  secrets: Secrets,
  redis: Redis | null,
  log: Logger,
): Platform {
  return {
    config,
    database,
    db: database.db,
    secrets,
    keys: new ApiKeyStore(database.db),
    clients: new ClientDirectory(database.db),
    redis,
    log,
    llm: createLlmProvider(config, database.db),
    storage: createStorageProvider(config, secrets, config.publicBaseUrl),
  };
}

/** Evicts cached keys when another process revokes or changes one. */
export async function listenForKeyChanges(platform: Platform): Promise<NotificationListener> {
  const listener = new NotificationListener(
    platform.database.url,
    { [KEYS_CHANNEL]: (keyId) => platform.keys.evict(keyId) },
    () => platform.keys.evict(),
  );
  await listener.start();
  return listener;
}
