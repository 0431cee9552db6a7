import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, normalizeBaseUrl, parseDuration, publicUrl } from './config.ts';

const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/ap-config-test', ...env });
const refused = (env: Record<string, string>, name: string) =>
  assert.throws(
    () => load(env),
    (error: unknown) => error instanceof ConfigError && error.message.includes(name),
    `${JSON.stringify(env)} is refused naming ${name}`,
  );

describe('configuration: every value checked at start, with an error naming the variable', () => {
  test('values that would break the service are refused', () => {
    refused({ OUTBOX_POLL_MS: '0' }, 'OUTBOX_POLL_MS');
    refused({ DOCS_RATE_LIMIT_PER_MINUTE: '0' }, 'DOCS_RATE_LIMIT_PER_MINUTE');
    refused({ FEED_RATE_LIMIT_PER_MINUTE: '0' }, 'FEED_RATE_LIMIT_PER_MINUTE');
    refused({ WEBHOOK_TIMEOUT_MS: '0' }, 'WEBHOOK_TIMEOUT_MS');
    refused({ WEBHOOK_FAILURE_THRESHOLD: '0' }, 'WEBHOOK_FAILURE_THRESHOLD');
    refused({ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY');
    refused({ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY');
    refused({ WEBHOOK_LOG_RETENTION_DAYS: '7' }, 'WEBHOOK_LOG_RETENTION_DAYS');
    refused({ WALLET_INDEX_REFRESH_MS: '10' }, 'WALLET_INDEX_REFRESH_MS');
    refused({ IDEMPOTENCY_TTL_HOURS: '0' }, 'IDEMPOTENCY_TTL_HOURS');
    refused({ PORT: '70000' }, 'PORT');
    refused({ PORT: '3000', FEED_PORT: '3000' }, 'FEED_PORT');
    refused({ PORT: '3.5' }, 'PORT');
    refused({ WEBHOOK_RETRY_SCHEDULE: '0s,30x' }, 'WEBHOOK_RETRY_SCHEDULE');
    refused({ WEBHOOK_RETRY_SCHEDULE: '0s,30d' }, 'WEBHOOK_RETRY_SCHEDULE');
    refused({ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL');
    refused({ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL');
    refused({ REDIS_URL: 'localhost:6379' }, 'REDIS_URL');
    refused({ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN');
    refused({ METRICS_TOKEN: 'has a space in it here' }, 'METRICS_TOKEN');
    refused({ MCP_ALLOWED_ORIGINS: 'app.example.com' }, 'MCP_ALLOWED_ORIGINS');
    refused({ SHUTDOWN_TIMEOUT: '0s' }, 'SHUTDOWN_TIMEOUT');
    refused({ DATABASE_CONNECT_TIMEOUT: '5' }, 'DATABASE_CONNECT_TIMEOUT');
    // Fewer connections than a worker holds at once with one sequence step running.
    refused({ DATABASE_POOL_MAX: '4' }, 'DATABASE_POOL_MAX');
  });

  test('the edges of each range are accepted', () => {
    const config = load({
      OUTBOX_POLL_MS: '10',
      DOCS_RATE_LIMIT_PER_MINUTE: '1',
      WEBHOOK_TIMEOUT_MS: '100',
      WEBHOOK_FAILURE_THRESHOLD: '1',
      WORKER_CONCURRENCY: '1',
      WEBHOOK_LOG_RETENTION_DAYS: '14',
      WALLET_INDEX_REFRESH_MS: '1000',
      SHUTDOWN_TIMEOUT: '1s',
      DATABASE_CONNECT_TIMEOUT: '500ms',
      DATABASE_POOL_MAX: '5',
    });
    assert.equal(config.outboxPollMs, 10);
    assert.equal(config.docsRateLimitPerMinute, 1);
    assert.equal(config.webhookTimeoutMs, 100);
    assert.equal(config.walletIndexRefreshMs, 1000);
    assert.equal(config.shutdownTimeoutMs, 1000);
    assert.equal(config.databaseConnectTimeoutMs, 500);
    assert.equal(config.databasePoolMax, 5);
  });

  test('durations: one value, and a list', () => {
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('30s'), 30_000);
    assert.equal(parseDuration('365d'), 365 * 86_400_000);
    assert.equal(parseDuration('5'), null);
    assert.equal(parseDuration('1.5s'), null);
    assert.deepEqual(
      load({ WEBHOOK_RETRY_SCHEDULE: '0s, 300ms,5m' }).webhookRetrySchedule,
      [0, 300, 300_000],
    );
  });
});

describe('configuration: the providers', () => {
  test('values out of range or of the wrong form are refused, naming the variable', () => {
    refused({ SMS_SIMULATOR_DELAY_MS: '-1' }, 'SMS_SIMULATOR_DELAY_MS');
    refused({ SMS_SIMULATOR_DELAY_MS: '600001' }, 'SMS_SIMULATOR_DELAY_MS');
    refused({ VOICE_SIMULATOR_CALL_MS: '1.5' }, 'VOICE_SIMULATOR_CALL_MS');
    refused(
      { VOICE_PROVIDER: 'retell', RETELL_API_KEY: 'k', RETELL_BASE_URL: 'api.retellai.com' },
      'RETELL_BASE_URL',
    );
    refused(
      { VOICE_PROVIDER: 'retell', RETELL_API_KEY: 'k', RETELL_ANALYSIS_WAIT_MS: '86400001' },
      'RETELL_ANALYSIS_WAIT_MS',
    );
    refused({ LLM_TIMEOUT_MS: '99' }, 'LLM_TIMEOUT_MS');
    refused({ LLM_BASE_URL: 'localhost:11434/v1' }, 'LLM_BASE_URL');
    refused({ S3_ENDPOINT: 'ftp://minio.internal' }, 'S3_ENDPOINT');
    refused({ S3_BUCKET: 'Knowledge_Base' }, 'S3_BUCKET');
    refused({ S3_REGION: 'US East' }, 'S3_REGION');
    refused({ UPLOAD_URL_TTL_MS: '999' }, 'UPLOAD_URL_TTL_MS');
    refused({ UPLOAD_URL_TTL_MS: '604800001' }, 'UPLOAD_URL_TTL_MS');
    refused({ KB_FETCH_MAX_BYTES: '1023' }, 'KB_FETCH_MAX_BYTES');
    refused({ KB_FETCH_TIMEOUT_MS: '0' }, 'KB_FETCH_TIMEOUT_MS');
    refused({ SMTP_URL: 'mail.example.com:587' }, 'SMTP_URL');
    refused({ EMAIL_FROM: 'nobody' }, 'EMAIL_FROM');
  });

  test('the edges of each range are accepted', () => {
    const low = load({
      SMS_SIMULATOR_DELAY_MS: '0',
      VOICE_SIMULATOR_CALL_MS: '0',
      VOICE_PROVIDER: 'retell',
      RETELL_API_KEY: 'key_test',
      RETELL_BASE_URL: 'http://127.0.0.1:9/',
      RETELL_ANALYSIS_WAIT_MS: '0',
      LLM_TIMEOUT_MS: '100',
      UPLOAD_URL_TTL_MS: '1000',
      KB_FETCH_MAX_BYTES: '1024',
      KB_FETCH_TIMEOUT_MS: '100',
      S3_BUCKET: 'kb',
      S3_REGION: 'auto',
    });
    assert.equal(low.smsSimulatorDelayMs, 0);
    assert.equal(low.voiceSimulatorCallMs, 0);
    assert.deepEqual(low.retell, {
      apiKey: 'key_test',
      baseUrl: 'http://127.0.0.1:9',
      agentId: null,
      analysisWaitMs: 0,
    });
    assert.equal(low.llmTimeoutMs, 100);
    assert.equal(low.uploadUrlTtlMs, 1000);
    assert.equal(low.kbFetchMaxBytes, 1024);
    assert.equal(low.kbFetchTimeoutMs, 100);
    const high = load({
      SMS_SIMULATOR_DELAY_MS: '600000',
      LLM_TIMEOUT_MS: '600000',
      UPLOAD_URL_TTL_MS: '604800000',
      KB_FETCH_MAX_BYTES: '1073741824',
      SMTP_URL: 'smtps://user:pass@mail.example.com:465',
    });
    assert.equal(high.uploadUrlTtlMs, 7 * 86_400_000);
    assert.equal(high.kbFetchMaxBytes, 1024 * 1024 * 1024);
    assert.equal(high.smtpUrl, 'smtps://user:pass@mail.example.com:465');
  });
});

describe('configuration: encryption keys', () => {
  const key = randomBytes(32);

  test('a 32-byte key in base64, base64url or hex is the key itself, never a passphrase', () => {
    for (const text of [key.toString('base64'), key.toString('base64url'), key.toString('hex')]) {
      assert.deepEqual(load({ ENCRYPTION_KEY: text }).encryptionKeys, [key], text);
    }
  });

  test('anything else is refused, naming the variable', () => {
    refused({ ENCRYPTION_KEY: 'correct horse battery staple' }, 'ENCRYPTION_KEY');
    refused({ ENCRYPTION_KEY: randomBytes(16).toString('base64') }, 'ENCRYPTION_KEY');
    refused({ ENCRYPTION_KEYS: `${key.toString('base64')},nope` }, 'ENCRYPTION_KEYS');
    refused({ ENCRYPTION_KEYS: `${key.toString('base64')},${key.toString('hex')}` }, 'ENCRYPTION_KEYS');
    refused(
      { ENCRYPTION_KEY: key.toString('base64'), ENCRYPTION_KEYS: key.toString('base64') },
      'ENCRYPTION_KEYS',
    );
  });

  test('ENCRYPTION_KEYS keeps its order: the first encrypts, all decrypt', () => {
    const old = randomBytes(32);
    assert.deepEqual(
      load({ ENCRYPTION_KEYS: `${key.toString('base64url')}, ${old.toString('hex')}` }).encryptionKeys,
      [key, old],
    );
  });
});

describe('configuration: the public base URL', () => {
  test('with or without a trailing /v1 or /, one normalized value', () => {
    for (const given of [
      'https://api.example.com',
      'https://api.example.com/',
      'https://api.example.com/v1',
      'https://api.example.com/v1/',
    ]) {
      const config = load({ PUBLIC_BASE_URL: given });
      assert.equal(config.publicBaseUrl, 'https://api.example.com', given);
      assert.equal(publicUrl(config, '/v1/mcp'), 'https://api.example.com/v1/mcp');
    }
    assert.equal(normalizeBaseUrl('https://example.com/agency/v1'), 'https://example.com/agency');
    refused({ PUBLIC_BASE_URL: 'api.example.com' }, 'PUBLIC_BASE_URL');
    refused({ PUBLIC_BASE_URL: 'https://api.example.com/?x=1' }, 'PUBLIC_BASE_URL');
  });

  test('HOST=0.0.0.0 (or ::) without PUBLIC_BASE_URL links to localhost, never to 0.0.0.0', () => {
    assert.equal(load({ HOST: '0.0.0.0', PORT: '8080' }).publicBaseUrl, 'http://localhost:8080');
    assert.equal(load({ HOST: '::', PORT: '8080' }).publicBaseUrl, 'http://localhost:8080');
    assert.equal(load({ HOST: '::1', PORT: '8080' }).publicBaseUrl, 'http://[::1]:8080');
    assert.equal(load({}).publicBaseUrl, 'http://127.0.0.1:3000');
  });
});

describe('configuration: trusted proxies', () => {
  test('a hop count or a list of addresses; true is refused, since it trusts every hop', () => {
    assert.equal(load({}).trustProxy, false);
    assert.equal(load({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(load({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.deepEqual(load({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).trustProxy, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
    refused({ TRUST_PROXY: 'true' }, 'TRUST_PROXY');
    refused({ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY');
    refused({ TRUST_PROXY: 'proxy.internal' }, 'TRUST_PROXY');
  });
});

describe('configuration: the demo seed', () => {
  test('on by default only for the embedded database', () => {
    assert.equal(load({}).seedDemo, true);
    assert.equal(load({ DATABASE_URL: 'postgres://db.internal/agency' }).seedDemo, false);
    assert.equal(load({ DATABASE_URL: 'postgres://db.internal/agency', SEED_DEMO: 'true' }).seedDemo, true);
    assert.equal(load({ SEED_DEMO: 'false' }).seedDemo, false);
  });
});
