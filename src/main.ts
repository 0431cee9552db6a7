import { ConfigError, loadConfig } from './config.ts';
import { ALL_ROLES, createLogger, type Role, runMigrations, startService } from './runtime.ts';

const USAGE = 'usage: npm start [-- serve|api|worker|feed|migrate]   (default: serve = api + worker + feed)';

async function main(): Promise<void> {
  const command = process.argv[2] ?? 'serve';
  const config = loadConfig();
  const log = createLogger(config);

  if (command === 'migrate') {
    const applied = await runMigrations(config, log);
    log.info({ applied }, applied.length ? 'migrations applied' : 'migrations already current');
    return;
  }
  const roles: Role[] | null =
    command === 'serve' ? ALL_ROLES : ALL_ROLES.includes(command as Role) ? [command as Role] : null;
  if (!roles) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }

  const service = await startService(config, roles, log);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    log.info({ signal }, 'shutting down: draining requests and running jobs');
    service.stop().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error) => {
  if (error instanceof ConfigError) process.stderr.write(`configuration error: ${error.message}\n`);
  else process.stderr.write(`fatal: ${error?.stack ?? error}\n`);
  process.exit(1);
});
