import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Providers } from '../providers/index.ts';
import { ApiKeyStore } from './auth/keys.ts';
import { ClientDirectory } from './auth/tenant.ts';
import { NotificationListener } from './db/notify.ts';
import type { DatabaseHandle, Db } from './db/pool.ts';
import type { Secrets } from './secrets.ts';

/**
 * What every part of a running process shares: configuration, the database, secrets, caches, the
 * providers and the hooks between modules. Built once per process by `buildPlatform` (`src/wiring.ts`).
 */
export interface Platform {
  config: Config;
  database: DatabaseHandle;
  db: Db;
  secrets: Secrets;
  keys: ApiKeyStore;
  clients: ClientDirectory;
  redis: Redis | null;
  log: Logger;
  /** The outside services, each built once (`src/providers/index.ts`). */
  providers: Providers;
  // `hooks` (the hooks between modules) is declared where they are wired, `src/wiring.ts`.
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
  wiring: Pick<Platform, 'providers' | 'hooks'>,
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
    ...wiring,
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
