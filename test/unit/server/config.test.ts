import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';
import { generateOrchestratorKey } from '../../../src/server/orchestration/orchestrator-keys.ts';

describe('service config', () => {
  it('has defaults for the embedded service', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.dataDir, path.resolve('.assay-data'));
    assert.equal(c.apiKeyTtlDays, 90);
    assert.equal(c.watchdogTimeoutMs, 15 * 60 * 1000);
    assert.equal(
      c.authCacheTtlMs,
      300_000,
      'revocations are broadcast, so verified keys are cached for minutes',
    );
    assert.equal(c.jwt, undefined);
    assert.ok(Object.isFrozen(c));
  });

  it('takes one HTTP worker per core on PostgreSQL, and only one on the embedded PGlite', () => {
    const pg = { DATABASE_URL: 'postgres://u@h/db' };
    assert.equal(loadConfig({}).workers, 1);
    assert.equal(loadConfig(pg).workers, availableParallelism());
    assert.equal(loadConfig({ ...pg, ASSAY_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ ASSAY_WORKERS: '1' }).workers, 1);
    assert.throws(() => loadConfig({ ASSAY_WORKERS: '2' }), ConfigError);
    assert.throws(() => loadConfig({ ...pg, ASSAY_WORKERS: '-1' }), ConfigError);
  });

  it('reads every variable, with fractional seconds for tests', () => {
    const c = loadConfig({
      PORT: '9090',
      ASSAY_HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@h/db',
      ASSAY_DATA_DIR: '/tmp/x',
      ASSAY_API_KEY_TTL_DAYS: '7',
      ASSAY_WATCHDOG_TIMEOUT_S: '1.5',
      ASSAY_WATCHDOG_INTERVAL_S: '0.2',
      ASSAY_LOG_LEVEL: 'warn',
    });
    assert.deepEqual(
      [
        c.port,
        c.host,
        c.databaseUrl,
        c.dataDir,
        c.apiKeyTtlDays,
        c.watchdogTimeoutMs,
        c.watchdogIntervalMs,
        c.logLevel,
      ],
      [9090, '0.0.0.0', 'postgres://u@h/db', '/tmp/x', 7, 1500, 200, 'warn'],
    );
  });

  it('treats empty values as unset', () => {
    assert.equal(loadConfig({ PORT: '', DATABASE_URL: '  ' }).port, 8080);
    assert.equal(loadConfig({ DATABASE_URL: '' }).databaseUrl, undefined);
  });

  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['ASSAY_API_KEY_TTL_DAYS', '0'],
    ['ASSAY_WATCHDOG_TIMEOUT_S', '-1'],
    ['ASSAY_WATCHDOG_TIMEOUT_S', 'soon'],
    ['ASSAY_LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['ASSAY_ORCHESTRATOR_KEY', 'not-a-key'],
    ['ASSAY_ORCHESTRATOR_KEY', `sk_agent_${'0'.repeat(32)}`],
  ] as const) {
    it(`refuses ${name}=${value} with an error naming the variable`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(name),
      );
    });
  }

  it('fetches the JWKS over plain http only from a loopback host', () => {
    const jwt = { ASSAY_JWT_ISSUER: 'i', ASSAY_JWT_AUDIENCE: 'a' };
    for (const url of ['http://idp.example.com/jwks', 'http://10.0.0.5/jwks', 'http://127.evil.test/jwks'])
      assert.throws(
        () => loadConfig({ ...jwt, ASSAY_JWT_JWKS_URL: url }),
        (e: unknown) => e instanceof ConfigError && /ASSAY_JWT_JWKS_URL must be https/.test(e.message),
        url,
      );
    for (const url of [
      'https://idp.example.com/jwks',
      'http://127.0.0.1:9999/jwks',
      'http://localhost/jwks',
      'http://[::1]:80/jwks',
    ])
      assert.equal(loadConfig({ ...jwt, ASSAY_JWT_JWKS_URL: url }).jwt?.jwksUrl, url);
  });

  it('takes a scope name for ASSAY_METRICS_SCOPE, and leaves /metrics open without one', () => {
    assert.equal(loadConfig({ ASSAY_METRICS_SCOPE: 'admin' }).metricsScope, 'admin');
    assert.equal(loadConfig({}).metricsScope, undefined);
    assert.throws(() => loadConfig({ ASSAY_METRICS_SCOPE: 'root' }), /ASSAY_METRICS_SCOPE/);
  });

  it('takes an agent key as ASSAY_ORCHESTRATOR_KEY, and never echoes a refused one', () => {
    const key = generateOrchestratorKey();
    assert.equal(loadConfig({ ASSAY_ORCHESTRATOR_KEY: key }).orchestratorKey, key);
    assert.equal(loadConfig({}).orchestratorKey, undefined);
    const userKey = key.replace(/^sk_agent_/, 'sk_user_');
    assert.throws(
      () => loadConfig({ ASSAY_ORCHESTRATOR_KEY: userKey }),
      (e: unknown) => e instanceof ConfigError && !e.message.includes(userKey.slice(8)),
    );
  });

  it('needs issuer, audience and exactly one JWKS source for identity-provider tokens', () => {
    assert.throws(() => loadConfig({ ASSAY_JWT_ISSUER: 'https://idp' }), ConfigError);
    assert.throws(
      () => loadConfig({ ASSAY_JWT_ISSUER: 'https://idp', ASSAY_JWT_AUDIENCE: 'assay' }),
      /exactly one/,
    );
    assert.throws(
      () =>
        loadConfig({
          ASSAY_JWT_ISSUER: 'i',
          ASSAY_JWT_AUDIENCE: 'a',
          ASSAY_JWT_JWKS_URL: 'https://x',
          ASSAY_JWT_JWKS_FILE: '/f',
        }),
      /exactly one/,
    );
    assert.throws(
      () => loadConfig({ ASSAY_JWT_ISSUER: 'i', ASSAY_JWT_AUDIENCE: 'a', ASSAY_JWT_JWKS_URL: 'ftp://x' }),
      /http/,
    );
    const c = loadConfig({ ASSAY_JWT_ISSUER: 'i', ASSAY_JWT_AUDIENCE: 'a', ASSAY_JWT_JWKS_FILE: '/f' });
    assert.deepEqual(c.jwt, { issuer: 'i', audience: 'a', jwksUrl: undefined, jwksFile: '/f' });
  });
});
