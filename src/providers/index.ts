import type { Config } from '../config.ts';
import type { Db } from '../platform/db/pool.ts';
import type { Secrets } from '../platform/secrets.ts';
import { type HoldingsFileContent, ImportSource } from './chain/import.ts';
import type { HoldingsSource } from './chain/types.ts';
import { createEmailProvider, type EmailProvider } from './email/index.ts';
import { createLlmProvider, type LlmProvider } from './llm/index.ts';
import { createSmsProvider, type SmsProvider, type SmsStatusSink } from './sms/index.ts';
import { createStorageProvider } from './storage/index.ts';
import type { LocalStorage } from './storage/local.ts';
import type { S3Storage } from './storage/s3.ts';
import { createVoiceProvider, type VoiceProgressSink, type VoiceProvider } from './voice/index.ts';

/**
 * The outside services of one process, each built once from `config` (`buildProviders`) and handed to
 * whatever needs it through `platform.providers`: the API's simulator hooks and the worker's loops of
 * one process reach the same instance.
 */
export interface Providers {
  /** `SMS_PROVIDER`: sends of the messaging loop, parsing of carrier webhooks. */
  sms: SmsProvider;
  /** `EMAIL_PROVIDER`: sequence steps, SDR post-call emails, portal invitations and resets. */
  email: EmailProvider;
  /** `VOICE_PROVIDER`: call placement, the simulator's scripts and calls, the adapter's webhooks. */
  voice: VoiceProvider;
  /** `LLM_PROVIDER`: AI gists. */
  llm: LlmProvider;
  /** `STORAGE_PROVIDER`: knowledge-base uploads. */
  storage: LocalStorage | S3Storage;
  /** The wallet feed's holdings: the chain, a holdings file, the demo holdings, or none. */
  chain: HoldingsSource | null;
}

/** Where the providers report back into the modules that own the records (wired in `src/wiring.ts`). */
export interface ProviderSinks {
  /** The messaging module's held delivery reports. */
  smsReports: SmsStatusSink;
  /** The calls module's progress reports. */
  voiceProgress: VoiceProgressSink;
  /** The holdings the chain source serves when none is configured and demo data is on. */
  demoHoldings: HoldingsFileContent;
}

export async function buildProviders(
  config: Config,
  db: Db,
  secrets: Pick<Secrets, 'encryptionKey'>,
  sinks: ProviderSinks,
): Promise<Providers> {
  return {
    sms: await createSmsProvider(config, sinks.smsReports),
    email: await createEmailProvider(config, db),
    voice: await createVoiceProvider(config, db, sinks.voiceProgress),
    llm: await createLlmProvider(config, db),
    storage: await createStorageProvider(config, secrets, config.publicBaseUrl),
    chain: await holdingsSource(config, sinks.demoHoldings),
  };
}

/** Releases what the providers hold (pooled SMTP connections) when the process stops. */
export async function closeProviders(providers: Providers): Promise<void> {
  await providers.email.close();
}

/**
 * The configured holdings source: the chain when `CHAIN_RPC_URL` is set, else the holdings file of
 * `CHAIN_HOLDINGS_FILE`, else (with the demo data of the first start) the demo holdings.
 */
export async function holdingsSource(
  config: Config,
  demoHoldings: HoldingsFileContent,
): Promise<HoldingsSource | null> {
  if (config.chainRpcUrl) {
    const { RpcSource } = await import('./chain/rpc.ts');
    return new RpcSource({
      rpc: config.chainRpcUrl,
      collection: config.collectionAddress!,
      registry: config.delegateRegistryAddress,
      startBlock: Number(config.collectionStartBlock),
      confirmations: config.chainConfirmations,
      maxBlockRange: config.chainLogBlockRange,
    });
  }
  if (config.chainHoldingsFile)
    return ImportSource.fromFile(config.chainHoldingsFile, config.collectionAddress);
  if (config.seedDemo) return Object.assign(new ImportSource(async () => demoHoldings, null), { demo: true });
  return null;
}

/** Whether `source` serves the demo holdings. */
export const isDemoSource = (source: HoldingsSource) => (source as { demo?: boolean }).demo === true;
