import path from 'node:path';

/** Every environment variable the service reads, parsed and typed here and nowhere else. */
export interface Config {
  port: number;
  feedPort: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  adminToken: string | null;
  encryptionKey: string | null;
  publicBaseUrl: string;
  logLevel: string;
  nodeEnv: string;
  trustProxy: boolean;
  outboundAllowPrivate: boolean;
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  webhookFailureThreshold: number;
  /** Outbound webhook requests one worker process keeps in flight at most. */
  webhookConcurrency: number;
  webhookLogRetentionDays: number;
  snapshotCacheMs: number;
  walletIndexRefreshMs: number;
  chainRpcUrl: string | null;
  collectionAddress: string | null;
  collectionStartBlock: bigint;
  chainConfirmations: number;
  /** JSON holdings file read by the `import` source of the wallet feed, when no `CHAIN_RPC_URL` is set. */
  chainHoldingsFile: string | null;
  /** Largest block range of one `eth_getLogs`; halved while the node answers "too many results". */
  chainLogBlockRange: number;
  delegateRegistryAddress: string;
  feedRateLimitPerMinute: number;
  mcpAllowedOrigins: string[];
  workerConcurrency: number;
  /** How often an idle worker looks for new events to fan out. */
  outboxPollMs: number;
  idempotencyTtlHours: number;
  taskReminderMinutes: number;
  /** Requests per source IP in any 60 s to the public docs API and site. */
  docsRateLimitPerMinute: number;
  /** Where the docs content is read from; null means the `docs/` folder shipped with the code. */
  docsDir: string | null;
  /** The country of a contact phone number given without a country code. */
  phoneDefaultCountry: string;
  /** Where demo credentials are printed on the first start; tests turn it off. */
  seedDemo: boolean;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const dataDir = path.resolve(str(env, 'DATA_DIR') ?? './.data');
  const port = int(env, 'PORT', 3000);
  const host = str(env, 'HOST') ?? '127.0.0.1';
  const docsDir = str(env, 'DOCS_DIR');
  const chainRpcUrl = str(env, 'CHAIN_RPC_URL');
  const collectionAddress = address(env, 'COLLECTION_ADDRESS');
  if (chainRpcUrl && !collectionAddress)
    throw new ConfigError('COLLECTION_ADDRESS is required when CHAIN_RPC_URL is set');
  return {
    port,
    feedPort: int(env, 'FEED_PORT', 3001),
    host,
    databaseUrl: str(env, 'DATABASE_URL'),
    dataDir,
    redisUrl: str(env, 'REDIS_URL'),
    adminToken: str(env, 'ADMIN_TOKEN'),
    encryptionKey: str(env, 'ENCRYPTION_KEY'),
    publicBaseUrl: (str(env, 'PUBLIC_BASE_URL') ?? `http://${host}:${port}`).replace(/\/+$/, ''),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    nodeEnv: str(env, 'NODE_ENV') ?? 'development',
    trustProxy: bool(env, 'TRUST_PROXY', false),
    outboundAllowPrivate: bool(env, 'OUTBOUND_ALLOW_PRIVATE', false),
    webhookRetrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', '0s,30s,5m,30m,4h'),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    webhookFailureThreshold: int(env, 'WEBHOOK_FAILURE_THRESHOLD', 20),
    webhookConcurrency: Math.max(1, int(env, 'WEBHOOK_CONCURRENCY', 100)),
    webhookLogRetentionDays: Math.max(14, int(env, 'WEBHOOK_LOG_RETENTION_DAYS', 30)),
    snapshotCacheMs: int(env, 'SNAPSHOT_CACHE_MS', 30_000),
    walletIndexRefreshMs: int(env, 'WALLET_INDEX_REFRESH_MS', 3_600_000),
    chainRpcUrl,
    collectionAddress,
    collectionStartBlock: BigInt(int(env, 'COLLECTION_START_BLOCK', 0)),
    chainConfirmations: int(env, 'CHAIN_CONFIRMATIONS', 12),
    chainHoldingsFile: str(env, 'CHAIN_HOLDINGS_FILE'),
    chainLogBlockRange: Math.max(1, int(env, 'CHAIN_LOG_BLOCK_RANGE', 10_000)),
    // delegate.xyz v2, at the same address on every chain it is deployed to.
    delegateRegistryAddress:
      address(env, 'DELEGATE_REGISTRY_ADDRESS') ?? '0x00000000000000447e69651d841bd8d104bed493',
    feedRateLimitPerMinute: Math.max(1, int(env, 'FEED_RATE_LIMIT_PER_MINUTE', 60)),
    mcpAllowedOrigins: list(env, 'MCP_ALLOWED_ORIGINS'),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 10),
    outboxPollMs: int(env, 'OUTBOX_POLL_MS', 50),
    idempotencyTtlHours: int(env, 'IDEMPOTENCY_TTL_HOURS', 24),
    taskReminderMinutes: int(env, 'TASK_REMINDER_MINUTES', 60),
    docsRateLimitPerMinute: int(env, 'DOCS_RATE_LIMIT_PER_MINUTE', 120),
    docsDir: docsDir ? path.resolve(docsDir) : null,
    phoneDefaultCountry: countryCode(env, 'PHONE_DEFAULT_COUNTRY', 'US'),
    seedDemo: bool(env, 'SEED_DEMO', true),
  };
}

function str(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

/** An EVM address, lower-cased; its checksum is checked where it is used (viem). */
function address(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw))
    throw new ConfigError(`${name} must be a 0x-prefixed 20-byte address`);
  return raw.toLowerCase();
}

function int(env: Env, name: string, fallback: number): number {
  const raw = str(env, name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined || raw === null) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function countryCode(env: Env, name: string, fallback: string): string {
  const value = (str(env, name) ?? fallback).toUpperCase();
  if (!/^[A-Z]{2}$/.test(value))
    throw new ConfigError(`${name} must be an ISO 3166-1 alpha-2 code such as US`);
  return value;
}

function list(env: Env, name: string): string[] {
  return (str(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a list such as `0s,30s,5m,30m,4h` into milliseconds. */
export function durations(env: Env, name: string, fallback: string): number[] {
  const raw = str(env, name) ?? fallback;
  return raw.split(',').map((part) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(part.trim());
    if (!match)
      throw new ConfigError(`${name} must be a list such as 0s,30s,5m; "${part}" is not a duration`);
    return Number(match[1]) * UNIT_MS[match[2]];
  });
}
