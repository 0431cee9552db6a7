import { ConfigError, loadConfig } from './config.ts';
import { isDatabaseUnavailable } from './platform/db/unavailable.ts';
import {
  ALL_ROLES,
  createLogger,
  type Role,
  rotateKeys,
  runMigrations,
  type Service,
  startService,
} from './runtime.ts';

const USAGE =
  'usage: npm start [-- serve|api|worker|feed|migrate|rotate-keys]   (default: serve = api + worker + feed)';
/** A signal this soon after the first is the same stop told twice (npm forwards what a terminal sends the group). */
const REPEAT_SIGNAL_MS = 1000;

async function main(): Promise<void> {
  const command = process.argv[2] ?? 'serve';
  const config = loadConfig();
  const log = createLogger(config);

  if (command === 'migrate') {
    const applied = await runMigrations(config, log);
    log.info({ applied }, applied.length ? 'migrations applied' : 'migrations already current');
    return;
  }
  if (command === 'rotate-keys') {
    for (const column of await rotateKeys(config, log))
      log.info(column, `re-encrypted ${column.resealed} of ${column.checked} under the first key`);
    return;
  }
  const roles: Role[] | null =
    command === 'serve' ? ALL_ROLES : ALL_ROLES.includes(command as Role) ? [command as Role] : null;
  if (!roles) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }

  // Listening before the start: a stop asked for while PostgreSQL starts still stops it.
  let service: Service | null = null;
  let firstSignalAt: number | null = null;
  const forceExit = (reason: string) => {
    log.warn({ reason }, 'stopping at once');
    (service?.kill() ?? Promise.resolve()).finally(() => process.exit(1));
  };
  const stop = (running: Service) => {
    running.stop().then(
      () => process.exit(process.exitCode ?? 0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        forceExit('shutdown failed');
      },
    );
  };
  const shutdown = (signal: string) => {
    if (firstSignalAt !== null) {
      if (Date.now() - firstSignalAt > REPEAT_SIGNAL_MS) forceExit(`second ${signal}`);
      return;
    }
    firstSignalAt = Date.now();
    log.info({ signal }, 'shutting down: draining requests and running jobs');
    setTimeout(() => forceExit('SHUTDOWN_TIMEOUT passed'), config.shutdownTimeoutMs);
    if (service) stop(service);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // graphile-worker completes and fails jobs without awaiting the promise: during a database outage
  // that rejection is nobody's. The job stays locked and is run again later; the process lives on.
  // Any other unhandled rejection is a bug: the process stops, as Node would stop it, but cleanly.
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      log.warn({ reason: String(reason) }, 'a background database call failed during an outage');
      return;
    }
    log.fatal({ err: reason }, 'unhandled rejection; stopping');
    process.exitCode = 1;
    shutdown('unhandledRejection');
  });

  service = await startService(config, roles, log);
  if (firstSignalAt !== null) stop(service);
}

main().catch((error) => {
  if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
  else process.stderr.write(`fatal: ${error?.stack ?? error}\n`);
  process.exit(1);
});
