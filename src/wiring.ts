import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { CallProgress } from './modules/calls/service.ts';
import { callProgressSink } from './modules/calls/voice.ts';
import { heldReportSink } from './modules/messaging/provider.ts';
import type { InboundSms } from './modules/messaging/service.ts';
import { sdrCallOutcomes } from './modules/sdr/outcomes.ts';
import { pauseOnReply } from './modules/sequences/service.ts';
import { DEMO_HOLDINGS } from './modules/wallet-feed/demo.ts';
import { createPlatform, type Platform } from './platform/context.ts';
import type { DatabaseHandle } from './platform/db/pool.ts';
import { Hook } from './platform/hooks.ts';
import type { Secrets } from './platform/secrets.ts';
import { buildProviders } from './providers/index.ts';

/**
 * How one process is put together, in one place: the hooks between modules, then the providers (which
 * report into the modules through those hooks), then the platform every route, job and loop is given.
 * `src/app.ts` and `src/jobs.ts` then list what runs on it.
 */
export async function buildPlatform(
  config: Config,
  database: DatabaseHandle,
  secrets: Secrets,
  redis: Redis | null,
  log: Logger,
): Promise<Platform> {
  const hooks = moduleHooks(config);
  const providers = await buildProviders(config, database.db, secrets, {
    smsReports: heldReportSink(database.db),
    voiceProgress: callProgressSink(database.db, hooks.callProgress),
    demoHoldings: DEMO_HOLDINGS,
  });
  return createPlatform(config, database, secrets, redis, log, { providers, hooks });
}

/**
 * Where a lower module lets a higher one react (the dependency must not run backwards), each run in
 * the lower module's transaction.
 */
export interface ModuleHooks {
  /** messaging → an inbound SMS was stored (after consent keywords). */
  inboundMessage: Hook<InboundSms>;
  /** calls → a step was applied to a call (repeats excluded). */
  callProgress: Hook<CallProgress>;
}

declare module './platform/context.ts' {
  interface Platform {
    hooks: ModuleHooks;
  }
}

/** Every hook handler of the service, in the order they run. */
export function moduleHooks(config: Pick<Config, 'sdrHourMs'>): ModuleHooks {
  const hooks: ModuleHooks = { inboundMessage: new Hook(), callProgress: new Hook() };
  // A reply to a sequence SMS pauses the enrollments that texted that phone from that number.
  hooks.inboundMessage.on(async (trx, message) => {
    await pauseOnReply(trx, message);
  });
  // A call of an SDR campaign moves its prospect on (dialing, connected, retry or done) and emits `sdr.*`.
  hooks.callProgress.on(sdrCallOutcomes(config.sdrHourMs));
  return hooks;
}
