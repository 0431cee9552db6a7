import { isIP } from 'node:net';
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
  /** `ENCRYPTION_KEYS` (or `ENCRYPTION_KEY`): the first encrypts and signs, all decrypt; empty when unset. */
  encryptionKeys: Buffer[];
  /** Where the service is reached, without a trailing `/` or `/v1`; build links with `publicUrl()`. */
  publicBaseUrl: string;
  logLevel: string;
  nodeEnv: string;
  /** Fastify's `trustProxy`: false, the number of proxy hops, or the proxies' addresses. */
  trustProxy: TrustProxy;
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
  /** Create the demo agency and serve the demo wallet holdings; on by default only for the embedded database. */
  seedDemo: boolean;
  /** Bearer token `GET /metrics` asks for; open when null. */
  metricsToken: string | null;
  /** A listener for `/metrics` and `/healthz` alone, for processes without the API (a `worker`). */
  metricsPort: number | null;
  /** How long a request waits for a database connection before it answers 503. */
  databaseConnectTimeoutMs: number;
  /** Connections a process keeps at most: N processes on one server use N times this of its `max_connections`. */
  databasePoolMax: number;
  /** How long a stop may take before the process stops its database and exits anyway. */
  shutdownTimeoutMs: number;
  /** While the configured Redis is unreachable: true lets requests through unlimited (and says so), false answers 503. */
  rateLimitFailOpen: boolean;
  /** `builtin` summarizes offline; `openai` calls an OpenAI-compatible Chat Completions endpoint. */
  llmProvider: 'builtin' | 'openai';
  /** Null means OpenAI's own API. */
  llmBaseUrl: string | null;
  llmApiKey: string | null;
  llmModel: string;
  llmTimeoutMs: number;
  /** `local` keeps objects under `DATA_DIR/storage`; `s3` uses an S3-compatible bucket. */
  storageProvider: 'local' | 's3';
  s3Bucket: string | null;
  /** Null leaves the region to the AWS SDK's default chain. */
  s3Region: string | null;
  /** An S3-compatible endpoint (MinIO, R2); addressed path-style when set. */
  s3Endpoint: string | null;
  /** Both or neither; neither leaves credentials to the AWS SDK's default chain. */
  s3AccessKeyId: string | null;
  s3SecretAccessKey: string | null;
  /** How long an upload URL stays valid. */
  uploadUrlTtlMs: number;
  /** Largest document a URL fetch or an upload read takes in. */
  kbFetchMaxBytes: number;
  /** A URL fetch's whole time, redirects included. */
  kbFetchTimeoutMs: number;
  smsProvider: 'simulator' | 'twilio';
  /** How long the SMS simulator takes to report a message delivered (or rejected by the "carrier"). */
  smsSimulatorDelayMs: number;
  twilioAccountSid: string | null;
  twilioAuthToken: string | null;
  twilioMessagingServiceSid: string | null;
  emailProvider: 'simulator' | 'smtp';
  /** `smtp://user:pass@host:587` (STARTTLS when the server offers it) or `smtps://…:465`. */
  smtpUrl: string | null;
  /** The sender of platform emails, `Name <address>` or a bare address. */
  emailFrom: string;
  voiceProvider: 'simulator' | 'retell';
  /** Real time a simulated call is held in flight, whatever its simulated duration. */
  voiceSimulatorCallMs: number;
  /** Set when `voiceProvider` is `retell`. */
  retell: RetellConfig | null;
  /** How long a renamed agent's old slug keeps answering as an alias. */
  agentSlugAliasTtlMs: number;
  /** How long a worker holds an outbound call it is placing before another worker may take it over. */
  callPlacementLeaseMs: number;
  // SMS
  /** How long a worker holds an SMS it is sending before another worker may take it over. */
  smsSendLeaseMs: number;
  /** How many SMS one round of a worker's send loop claims. */
  smsSendBatch: number;
  /** How often an idle worker looks for SMS to send and delivery reports to apply. */
  smsSendPollMs: number;
  // Sequences
  /** How often each worker runs the sequence tick (SPEC: every minute). */
  sequenceTickMs: number;
  /** The length of one `wait_minutes` minute of a sequence step. */
  sequenceMinuteMs: number;
  /** How long a worker holds an enrollment whose step it runs before another worker may take it over. */
  sequenceLeaseMs: number;
  /** How often a followed smart list relative to now (`within_last_days`) is synced whole again. */
  sequenceListResyncMs: number;
  // Gists and knowledge-base ingestion
  /** FUEL one generated gist costs (a cache hit costs nothing). */
  gistFuelCost: number;
  /** How long a worker holds a document it ingests before another worker may take it over. */
  kbIngestLeaseMs: number;
  /** Delays before the retries of an ingestion that failed for a passing reason; its length is the retry count. */
  kbIngestRetrySchedule: number[];
  /** How often an idle worker looks for documents to ingest. */
  kbIngestPollMs: number;
  // AI jobs: pre-call briefs and lead enrichments
  /** FUEL one AI job costs, debited when it is accepted and refunded if it fails. */
  aiJobFuelCost: number;
  /** How long a worker holds an AI job it runs before another worker may take it over. */
  aiJobLeaseMs: number;
  /** Claims of one AI job before it fails: a worker died holding it every time. */
  aiJobMaxAttempts: number;
  /** How often an idle worker looks for AI jobs to run. */
  aiJobPollMs: number;
  // SDR campaigns
  /** How often the SDR dialer looks for prospects to dial. */
  sdrTickMs: number;
  /** The length of one hour of a campaign's `retry_interval_hours`. */
  sdrHourMs: number;
  /** How long the dialer waits for a prospect's pre-call brief before it dials without one. */
  sdrPrecallBriefWaitMs: number;
  // Failed authentication
  /** Failed authentications (401) one address may make per minute before it is answered 429. */
  authFailuresPerMinute: number;
  // Outbox relay failures and worker takeover
  /** Hand-overs of one event to the consumers before the relay leaves it dead. */
  outboxMaxAttempts: number;
  /** Wait before an event's first retry; doubled each attempt up to `outboxRetryMaxMs`. */
  outboxRetryBaseMs: number;
  outboxRetryMaxMs: number;
  /** A worker whose heartbeat is this old is dead: a live worker unlocks the graphile jobs it held. */
  workerStaleAfterMs: number;
  // Portal accounts
  /** A portal session unused this long ends. */
  portalSessionIdleMs: number;
  /** A portal session ends this long after sign-in, however much it is used. */
  portalSessionMaxMs: number;
  /** How long an invitation link stays valid. */
  portalInviteTtlMs: number;
  /** How long a password-reset link stays valid. */
  portalResetTtlMs: number;
  /** Failed portal sign-ins one email, and one address, may make per minute before they are answered 429. */
  portalSignInFailuresPerMinute: number;
}

export interface RetellConfig {
  apiKey: string;
  /** Retell's API; tests and proxies point it elsewhere. */
  baseUrl: string;
  agentId: string | null;
  /** How long after a call ends its analysis (summary) is awaited before the call completes without it. */
  analysisWaitMs: number;
}

export type TrustProxy = false | number | string[];

/**
 * Fastify's `trustProxy` for a configured value. Fastify ignores a bare hop count (it cannot tell a
 * proxy from a client that reached the service directly), so a count becomes "the N nearest hops":
 * right where clients can reach the service only through its proxies (a PaaS router, a private network).
 */
export function trustProxyOption(
  value: TrustProxy,
): false | string[] | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const MAX_RATE = 1_000_000_000;
const MIB = 1_048_576;

export function loadConfig(env: Env = process.env): Config {
  const dataDir = path.resolve(str(env, 'DATA_DIR') ?? './.data');
  const port = int(env, 'PORT', 3000, { min: 1, max: 65_535 });
  const feedPort = int(env, 'FEED_PORT', 3001, { min: 1, max: 65_535 });
  if (feedPort === port) throw new ConfigError(`FEED_PORT must differ from PORT (both are ${port})`);
  const host = str(env, 'HOST') ?? '127.0.0.1';
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const docsDir = str(env, 'DOCS_DIR');
  const chainRpcUrl = url(env, 'CHAIN_RPC_URL', ['http:', 'https:']);
  const collectionAddress = address(env, 'COLLECTION_ADDRESS');
  if (chainRpcUrl && !collectionAddress)
    throw new ConfigError('COLLECTION_ADDRESS is required when CHAIN_RPC_URL is set');
  const metricsPort = optionalInt(env, 'METRICS_PORT', { min: 1, max: 65_535 });
  if (metricsPort !== null && (metricsPort === port || metricsPort === feedPort))
    throw new ConfigError('METRICS_PORT must differ from PORT and FEED_PORT');
  const smsProvider = oneOf(env, 'SMS_PROVIDER', ['simulator', 'twilio'] as const, 'simulator');
  const twilioAccountSid = twilioSid(env, 'TWILIO_ACCOUNT_SID', 'AC');
  const twilioAuthToken = str(env, 'TWILIO_AUTH_TOKEN');
  const missingTwilio = [!twilioAccountSid && 'TWILIO_ACCOUNT_SID', !twilioAuthToken && 'TWILIO_AUTH_TOKEN'];
  if (smsProvider === 'twilio' && missingTwilio.some(Boolean))
    throw new ConfigError(`SMS_PROVIDER=twilio needs ${missingTwilio.filter(Boolean).join(' and ')}`);
  const emailProvider = oneOf(env, 'EMAIL_PROVIDER', ['simulator', 'smtp'] as const, 'simulator');
  const smtpUrl = url(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  if (emailProvider === 'smtp' && !smtpUrl) throw new ConfigError('EMAIL_PROVIDER=smtp needs SMTP_URL');
  const voiceProvider = oneOf(env, 'VOICE_PROVIDER', ['simulator', 'retell'] as const, 'simulator');
  const storageProvider = oneOf(env, 'STORAGE_PROVIDER', ['local', 's3'] as const, 'local');
  const s3Bucket = s3BucketName(env, 'S3_BUCKET');
  if (storageProvider === 's3' && !s3Bucket)
    throw new ConfigError('S3_BUCKET is required when STORAGE_PROVIDER is s3');
  const s3AccessKeyId = str(env, 'S3_ACCESS_KEY_ID');
  const s3SecretAccessKey = str(env, 'S3_SECRET_ACCESS_KEY');
  if (!s3AccessKeyId !== !s3SecretAccessKey)
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all');
  return {
    port,
    feedPort,
    host,
    databaseUrl,
    dataDir,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    adminToken: token(env, 'ADMIN_TOKEN'),
    encryptionKeys: encryptionKeys(env),
    publicBaseUrl: normalizeBaseUrl(
      str(env, 'PUBLIC_BASE_URL') ?? defaultBaseUrl(host, port),
      'PUBLIC_BASE_URL',
    ),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    nodeEnv: str(env, 'NODE_ENV') ?? 'development',
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    outboundAllowPrivate: bool(env, 'OUTBOUND_ALLOW_PRIVATE', false),
    webhookRetrySchedule: durations(env, 'WEBHOOK_RETRY_SCHEDULE', '0s,30s,5m,30m,4h', {
      min: 0,
      max: 7 * DAY_MS,
    }),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 5 * MINUTE_MS }),
    webhookFailureThreshold: int(env, 'WEBHOOK_FAILURE_THRESHOLD', 20, { min: 1, max: 100_000 }),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 100, { min: 1, max: 10_000 }),
    webhookLogRetentionDays: int(env, 'WEBHOOK_LOG_RETENTION_DAYS', 30, { min: 14, max: 3650 }),
    snapshotCacheMs: int(env, 'SNAPSHOT_CACHE_MS', 30_000, { min: 0, max: DAY_MS }),
    walletIndexRefreshMs: int(env, 'WALLET_INDEX_REFRESH_MS', 3_600_000, { min: 1000, max: 30 * DAY_MS }),
    chainRpcUrl,
    collectionAddress,
    collectionStartBlock: BigInt(
      int(env, 'COLLECTION_START_BLOCK', 0, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    ),
    chainConfirmations: int(env, 'CHAIN_CONFIRMATIONS', 12, { min: 0, max: 10_000 }),
    chainHoldingsFile: str(env, 'CHAIN_HOLDINGS_FILE'),
    chainLogBlockRange: int(env, 'CHAIN_LOG_BLOCK_RANGE', 10_000, { min: 1, max: 10_000_000 }),
    // delegate.xyz v2, at the same address on every chain it is deployed to.
    delegateRegistryAddress:
      address(env, 'DELEGATE_REGISTRY_ADDRESS') ?? '0x00000000000000447e69651d841bd8d104bed493',
    feedRateLimitPerMinute: int(env, 'FEED_RATE_LIMIT_PER_MINUTE', 60, { min: 1, max: MAX_RATE }),
    mcpAllowedOrigins: origins(env, 'MCP_ALLOWED_ORIGINS'),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 10, { min: 1, max: 1000 }),
    outboxPollMs: int(env, 'OUTBOX_POLL_MS', 50, { min: 10, max: MINUTE_MS }),
    idempotencyTtlHours: int(env, 'IDEMPOTENCY_TTL_HOURS', 24, { min: 1, max: 24 * 365 }),
    taskReminderMinutes: int(env, 'TASK_REMINDER_MINUTES', 60, { min: 1, max: 60 * 24 * 30 }),
    docsRateLimitPerMinute: int(env, 'DOCS_RATE_LIMIT_PER_MINUTE', 120, { min: 1, max: MAX_RATE }),
    docsDir: docsDir ? path.resolve(docsDir) : null,
    phoneDefaultCountry: countryCode(env, 'PHONE_DEFAULT_COUNTRY', 'US'),
    // A demo agency with FUEL and printed keys has no place on a database someone else runs.
    seedDemo: bool(env, 'SEED_DEMO', databaseUrl === null),
    metricsToken: token(env, 'METRICS_TOKEN'),
    metricsPort,
    databaseConnectTimeoutMs: duration(env, 'DATABASE_CONNECT_TIMEOUT', '5s', {
      min: 100,
      max: 2 * MINUTE_MS,
    }),
    databasePoolMax: int(env, 'DATABASE_POOL_MAX', 20, { min: 5, max: 1000 }),
    shutdownTimeoutMs: duration(env, 'SHUTDOWN_TIMEOUT', '8s', { min: 1000, max: 10 * MINUTE_MS }),
    rateLimitFailOpen: bool(env, 'RATE_LIMIT_FAIL_OPEN', true),
    smsProvider,
    smsSimulatorDelayMs: int(env, 'SMS_SIMULATOR_DELAY_MS', 200, { min: 0, max: 10 * MINUTE_MS }),
    twilioAccountSid,
    twilioAuthToken,
    twilioMessagingServiceSid: twilioSid(env, 'TWILIO_MESSAGING_SERVICE_SID', 'MG'),
    emailProvider,
    smtpUrl,
    emailFrom: emailAddress(env, 'EMAIL_FROM', 'Agency Platform <no-reply@localhost>'),
    voiceProvider,
    voiceSimulatorCallMs: int(env, 'VOICE_SIMULATOR_CALL_MS', 1500, { min: 0, max: 10 * MINUTE_MS }),
    retell: voiceProvider === 'retell' ? retellConfig(env) : null,
    agentSlugAliasTtlMs: duration(env, 'AGENT_SLUG_ALIAS_TTL', '365d', { min: 100, max: 10 * 365 * DAY_MS }),
    callPlacementLeaseMs: int(env, 'CALL_PLACEMENT_LEASE_MS', 60_000, { min: 100, max: DAY_MS }),
    llmProvider: oneOf(env, 'LLM_PROVIDER', ['builtin', 'openai'] as const, 'builtin'),
    llmBaseUrl: url(env, 'LLM_BASE_URL', ['http:', 'https:']),
    llmApiKey: str(env, 'LLM_API_KEY'),
    llmModel: str(env, 'LLM_MODEL') ?? 'gpt-4o-mini',
    llmTimeoutMs: int(env, 'LLM_TIMEOUT_MS', 30_000, { min: 100, max: 10 * MINUTE_MS }),
    storageProvider,
    s3Bucket,
    s3Region: s3RegionName(env, 'S3_REGION'),
    s3Endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:']),
    s3AccessKeyId,
    s3SecretAccessKey,
    // An S3 presigned URL is valid for seven days at most.
    uploadUrlTtlMs: int(env, 'UPLOAD_URL_TTL_MS', 900_000, { min: 1000, max: 7 * DAY_MS }),
    kbFetchMaxBytes: int(env, 'KB_FETCH_MAX_BYTES', 10 * MIB, { min: 1024, max: 1024 * MIB }),
    kbFetchTimeoutMs: int(env, 'KB_FETCH_TIMEOUT_MS', 30_000, { min: 100, max: 10 * MINUTE_MS }),
    // SMS
    smsSendLeaseMs: int(env, 'SMS_SEND_LEASE_MS', 60_000, { min: 100, max: DAY_MS }),
    smsSendBatch: int(env, 'SMS_SEND_BATCH', 50, { min: 1, max: 1000 }),
    smsSendPollMs: int(env, 'SMS_SEND_POLL_MS', 100, { min: 10, max: MINUTE_MS }),
    // Sequences
    sequenceTickMs: int(env, 'SEQUENCE_TICK_MS', 60_000, { min: 10, max: DAY_MS }),
    sequenceMinuteMs: int(env, 'SEQUENCE_MINUTE_MS', 60_000, { min: 1, max: DAY_MS }),
    sequenceLeaseMs: int(env, 'SEQUENCE_LEASE_MS', 120_000, { min: 100, max: DAY_MS }),
    sequenceListResyncMs: duration(env, 'SEQUENCE_LIST_RESYNC', '1h', { min: 10, max: DAY_MS }),
    // Gists and knowledge-base ingestion
    gistFuelCost: int(env, 'GIST_FUEL_COST', 1, { min: 1, max: 1000 }),
    kbIngestLeaseMs: int(env, 'KB_INGEST_LEASE_MS', 300_000, { min: 100, max: DAY_MS }),
    kbIngestRetrySchedule: durations(env, 'KB_INGEST_RETRY_SCHEDULE', '30s,5m,30m', { min: 0, max: DAY_MS }),
    kbIngestPollMs: int(env, 'KB_INGEST_POLL_MS', 500, { min: 10, max: MINUTE_MS }),
    // AI jobs
    aiJobFuelCost: int(env, 'AI_JOB_FUEL_COST', 1, { min: 1, max: 1000 }),
    aiJobLeaseMs: duration(env, 'AI_JOB_LEASE', '2m', { min: 100, max: DAY_MS }),
    aiJobMaxAttempts: int(env, 'AI_JOB_MAX_ATTEMPTS', 3, { min: 1, max: 100 }),
    aiJobPollMs: duration(env, 'AI_JOB_POLL', '500ms', { min: 10, max: MINUTE_MS }),
    // SDR campaigns
    sdrTickMs: int(env, 'SDR_TICK_MS', 60_000, { min: 50, max: DAY_MS }),
    sdrHourMs: int(env, 'SDR_HOUR_MS', 3_600_000, { min: 1, max: DAY_MS }),
    sdrPrecallBriefWaitMs: duration(env, 'SDR_PRECALL_BRIEF_WAIT', '2m', { min: 0, max: DAY_MS }),
    // Failed authentication
    authFailuresPerMinute: int(env, 'AUTH_FAILURES_PER_MINUTE', 30, { min: 1, max: MAX_RATE }),
    // Outbox relay failures and worker takeover
    outboxMaxAttempts: int(env, 'OUTBOX_MAX_ATTEMPTS', 10, { min: 1, max: 1000 }),
    outboxRetryBaseMs: duration(env, 'OUTBOX_RETRY_BASE', '1s', { min: 0, max: DAY_MS }),
    outboxRetryMaxMs: duration(env, 'OUTBOX_RETRY_MAX', '10m', { min: 0, max: DAY_MS }),
    workerStaleAfterMs: duration(env, 'WORKER_STALE_AFTER', '60s', { min: 1000, max: DAY_MS }),
    // Portal accounts
    portalSessionIdleMs: duration(env, 'PORTAL_SESSION_IDLE', '12h', { min: 1000, max: 365 * DAY_MS }),
    portalSessionMaxMs: duration(env, 'PORTAL_SESSION_MAX', '7d', { min: 1000, max: 365 * DAY_MS }),
    portalInviteTtlMs: duration(env, 'PORTAL_INVITE_TTL', '7d', { min: 1000, max: 365 * DAY_MS }),
    portalResetTtlMs: duration(env, 'PORTAL_RESET_TTL', '1h', { min: 1000, max: 30 * DAY_MS }),
    portalSignInFailuresPerMinute: int(env, 'PORTAL_SIGN_IN_FAILURES_PER_MINUTE', 10, {
      min: 1,
      max: MAX_RATE,
    }),
  };
}

function retellConfig(env: Env): RetellConfig {
  const apiKey = str(env, 'RETELL_API_KEY');
  if (!apiKey) throw new ConfigError('RETELL_API_KEY is required when VOICE_PROVIDER=retell');
  const baseUrl = url(env, 'RETELL_BASE_URL', ['http:', 'https:']) ?? 'https://api.retellai.com';
  return {
    apiKey,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    agentId: str(env, 'RETELL_AGENT_ID'),
    analysisWaitMs: int(env, 'RETELL_ANALYSIS_WAIT_MS', 600_000, { min: 0, max: DAY_MS }),
  };
}

/** An absolute URL of the service: `publicUrl(config, '/v1/mcp')`. Every public link is built here. */
export function publicUrl(config: Pick<Config, 'publicBaseUrl'>, pathname: string): string {
  return `${config.publicBaseUrl}${pathname.startsWith('/') ? pathname : `/${pathname}`}`;
}

/**
 * The base URL without a trailing `/` or `/v1`: SPEC.md's `{base_url}` ends with `/v1`, and operators
 * write either form. A path prefix of a reverse proxy (`https://example.com/agency`) is kept.
 */
export function normalizeBaseUrl(raw: string, name = 'PUBLIC_BASE_URL'): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(
      `${name} must be an absolute http(s) URL such as https://api.example.com, got "${raw}"`,
    );
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash || parsed.username)
    throw new ConfigError(
      `${name} must be an http(s) URL without query, fragment or credentials, got "${raw}"`,
    );
  const pathname = parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/i, '').replace(/\/+$/, '');
  return `${parsed.origin}${pathname}`;
}

/** `HOST=0.0.0.0` (or `::`) is where to listen, not an address to link to: links then say `localhost`. */
function defaultBaseUrl(host: string, port: number): string {
  const linkHost = ['0.0.0.0', '::', '[::]'].includes(host)
    ? 'localhost'
    : isIP(host) === 6
      ? `[${host}]`
      : host;
  return `http://${linkHost}:${port}`;
}

function str(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

interface Range {
  min: number;
  max: number;
}

function int(env: Env, name: string, fallback: number, range: Range): number {
  return optionalInt(env, name, range) ?? fallback;
}

function optionalInt(env: Env, name: string, { min, max }: Range): number | null {
  const raw = str(env, name);
  if (raw === null) return null;
  const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined || raw === null) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = str(env, name)?.toLowerCase() ?? fallback;
  if (!(choices as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  let protocol = '';
  try {
    protocol = new URL(raw).protocol;
  } catch {}
  if (!protocols.includes(protocol))
    throw new ConfigError(`${name} must be a ${protocols.map((p) => `${p}//`).join(' or ')} URL`);
  return raw;
}

/** A shared secret a person types into a header: long enough not to be guessed, no spaces. */
function token(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw !== null && !/^\S{16,}$/.test(raw))
    throw new ConfigError(`${name} must be at least 16 characters without spaces`);
  return raw;
}

/** An EVM address, lower-cased; its checksum is checked where it is used (viem). */
function address(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw))
    throw new ConfigError(`${name} must be a 0x-prefixed 20-byte address`);
  return raw.toLowerCase();
}

/** A Twilio SID: its two-letter kind (AC account, MG messaging service) and 32 hex digits. */
function twilioSid(env: Env, name: string, prefix: string): string | null {
  const raw = str(env, name);
  if (raw !== null && !new RegExp(`^${prefix}[0-9a-f]{32}$`, 'i').test(raw))
    throw new ConfigError(`${name} must be a Twilio SID: ${prefix} and 32 hexadecimal digits`);
  return raw;
}

/** A sender: a bare address or `Name <address>`. */
function emailAddress(env: Env, name: string, fallback: string): string {
  const value = str(env, name) ?? fallback;
  if (!/^([^<>]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(value))
    throw new ConfigError(
      `${name} must be an address or "Name <address>", such as Acme <no-reply@acme.test>`,
    );
  return value;
}

/** A bucket name in S3's alphabet: lower-case letters, digits, dots and hyphens, at most 63. */
function s3BucketName(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw !== null && !/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/.test(raw))
    throw new ConfigError(
      `${name} must be a bucket name of lower-case letters, digits, dots and hyphens, got "${raw}"`,
    );
  return raw;
}

/** A region such as us-east-1 (or R2's auto). */
function s3RegionName(env: Env, name: string): string | null {
  const raw = str(env, name);
  if (raw !== null && !/^[a-z0-9-]{2,32}$/.test(raw))
    throw new ConfigError(`${name} must be a region such as us-east-1, got "${raw}"`);
  return raw;
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

function origins(env: Env, name: string): string[] {
  const values = list(env, name);
  for (const value of values) {
    if (value !== '*' && !/^https?:\/\/[^/\s?#]+\/?$/i.test(value))
      throw new ConfigError(
        `${name} must list origins such as https://app.example.com (or *), got "${value}"`,
      );
  }
  return values;
}

/** The proxies whose `X-Forwarded-For` is believed: `true` is refused, since it lets a client pick its own IP. */
function trustProxy(env: Env, name: string): TrustProxy {
  const raw = str(env, name);
  if (raw === null || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase()))
    throw new ConfigError(
      `${name}=true would trust every hop, so any client could pick its own IP with X-Forwarded-For: ` +
        'give the number of proxies in front of the service (such as 1) or their addresses (such as 10.0.0.0/8)',
    );
  if (/^\d+$/.test(raw)) return int(env, name, 0, { min: 1, max: 20 });
  const entries = list(env, name);
  for (const entry of entries) {
    const [ip, bits, extra] = entry.split('/');
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(entry);
    const family = isIP(ip);
    const maxBits = family === 6 ? 128 : 32;
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (!named && (family === 0 || !validBits || extra !== undefined))
      throw new ConfigError(
        `${name} must be a hop count or a list of proxy addresses or CIDR ranges, got "${entry}"`,
      );
  }
  return entries;
}

/** 32 random bytes, in base64, base64url or hex: anything else is refused, never stretched into a key. */
function encryptionKeys(env: Env): Buffer[] {
  const single = str(env, 'ENCRYPTION_KEY');
  const several = str(env, 'ENCRYPTION_KEYS');
  if (single && several) throw new ConfigError('Set ENCRYPTION_KEY or ENCRYPTION_KEYS, not both');
  const name = several ? 'ENCRYPTION_KEYS' : 'ENCRYPTION_KEY';
  const keys = list(env, name).map((value, index) => {
    const key = decodeKey(value);
    if (!key)
      throw new ConfigError(
        `${name}${several ? ` (key ${index + 1})` : ''} must be 32 random bytes in base64, base64url or hex ` +
          '(openssl rand -base64 32)',
      );
    return key;
  });
  if (new Set(keys.map((key) => key.toString('hex'))).size !== keys.length)
    throw new ConfigError(`${name} lists the same key twice`);
  return keys;
}

function decodeKey(value: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return null;
  // Node's base64 decoder reads the base64url alphabet too.
  const key = Buffer.from(value, 'base64');
  return key.length === 32 ? key : null;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** One duration such as `500ms`, `30s`, `5m`, `4h` or `365d`, in milliseconds; null when it is not one. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

/** A duration variable in milliseconds, within `range` (in milliseconds). */
export function duration(env: Env, name: string, fallback: string, range: Range): number {
  const raw = str(env, name) ?? fallback;
  const value = parseDuration(raw);
  if (value === null || value < range.min || value > range.max)
    throw new ConfigError(
      `${name} must be a duration such as 500ms, 30s, 5m, 4h or 365d from ${formatDuration(range.min)} to ` +
        `${formatDuration(range.max)}, got "${raw}"`,
    );
  return value;
}

/** Parses a list such as `0s,30s,5m,30m,4h` into milliseconds, each within `range`. */
export function durations(env: Env, name: string, fallback: string, range: Range): number[] {
  const raw = str(env, name) ?? fallback;
  return raw.split(',').map((part) => {
    const value = parseDuration(part);
    if (value === null || value < range.min || value > range.max)
      throw new ConfigError(
        `${name} must be a list such as 0s,30s,5m of durations up to ${formatDuration(range.max)}; "${part}" is not one`,
      );
    return value;
  });
}

function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'])
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}
