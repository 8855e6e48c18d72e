import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { ComputeKind } from '../compute/compute-provider.ts';
import { ec2Config, type Ec2Config } from '../compute/ec2-config.ts';
import { localCompute, type LocalCompute } from '../compute/local-config.ts';
import { localCapacity, type LocalCapacity } from '../compute/local-gpus.ts';
import { slurmConfig, type SlurmConfig } from '../compute/slurm-config.ts';
import { parseToken } from './auth/api-key-token.ts';
import type { Scope } from '@assay/contract';
import { isScope } from './auth/scopes.ts';
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import { storageConfig, type StorageConfig } from './storage/storage-config.ts';

/** Everything the service reads from its environment, validated once at start and frozen. */
export interface ServiceConfig {
  readonly host: string;
  readonly port: number;
  /** PostgreSQL connection string; when absent the embedded PGlite database in `dataDir` is used. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** PostgreSQL only: longest statement, and longest idle time inside a transaction (0: no limit). */
  readonly pgStatementTimeoutMs: number;
  readonly pgIdleInTransactionTimeoutMs: number;
  /** How long shutdown waits for requests in flight before it closes their connections. */
  readonly shutdownTimeoutMs: number;
  /** HTTP worker processes sharing the port (server-cluster.ts); 1: one process does everything. */
  readonly workers: number;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly apiKeyTtlDays: number;
  /** PostgreSQL only: where the LISTEN session connects, when not to `databaseUrl`. */
  readonly databaseListenUrl: string | undefined;
  /**
   * How long a verified token stays cached; revocations are broadcast, so this bounds no revocation's delay.
   */
  readonly authCacheTtlMs: number;
  /** How often cached keys are re-read for revocation: the staleness bound should a notice go unheard. */
  readonly authRecheckMs: number;
  readonly authCacheMaxEntries: number;
  /** Failed authentications one address may make per minute before it gets 429; 0: no limit. */
  readonly authFailureLimit: number;
  /** The scope a bearer needs to read /metrics; undefined: /metrics is open. */
  readonly metricsScope: Scope | undefined;
  readonly watchdogTimeoutMs: number;
  /** Runner control long-polls one replica holds open at once; past it a poll answers at once. */
  readonly runControlMaxWaiting: number;
  readonly watchdogIntervalMs: number;
  /**
   * How often managed runs left pending without a workflow get it started, and how long until they
   * fail instead.
   */
  readonly reconcileIntervalMs: number;
  readonly reconcileGiveUpMs: number;
  /** Worker keys stop working this long after their run ended (time to finish output uploads). */
  readonly workerKeyGraceMs: number;
  /** A run takes metric points this long after it ended. */
  readonly metricsGraceMs: number;
  /** Console log text one run keeps (ASSAY_RUN_LOG_MAX_MB in bytes); past it the middle is dropped. */
  readonly runLogMaxBytes: number;
  /** Distinct metric keys one run may log. */
  readonly metricKeysPerRun: number;
  /** Points of ended runs' compared curves kept per service instance (src/server/metrics/curve-cache.ts). */
  readonly curveCachePoints: number;
  /** How long a managed instance's one-time exchange token can buy its worker key. */
  readonly exchangeTokenTtlMs: number;
  readonly jwt: JwtConfig | undefined;
  /** The service's own base URL as clients reach it; local-storage upload URLs point here. */
  readonly publicUrl: string;
  readonly searchEnabled: boolean;
  /** PDF text extraction at finalize runs in a worker thread within these limits. */
  readonly textExtraction: { readonly timeoutMs: number; readonly maxHeapMb: number };
  /** Largest inline asset (reports, environment snapshots); larger content goes through presigned uploads. */
  readonly inlineMaxBytes: number;
  readonly storage: StorageConfig;
  /**
   * A pre-shared agent key for standalone Temporal workers, stored at start for the orchestrator user;
   * never logged.
   */
  readonly orchestratorKey: string | undefined;
  /**
   * The EC2 settings when ASSAY_COMPUTE is ec2: variations' launch blocks are checked against
   * their allowlists.
   */
  readonly ec2: Ec2Config | undefined;
  /**
   * The Slurm settings when ASSAY_COMPUTE is slurm: launch blocks' `slurm:` jobs are checked against their
   * allowlists. Reading them needs no Slurm here; only the worker submits.
   */
  readonly slurm: SlurmConfig | undefined;
  /** ASSAY_COMPUTE: launch blocks tagged for another provider are refused when written. */
  readonly compute: ComputeKind;
  /**
   * On `local`: whose launch blocks it runs, its sandbox and its limits, checked at provisioning and sweep
   * creation as the provider (built from the same settings) checks again.
   */
  readonly local: LocalCompute | undefined;
  /**
   * `local` only: the run slots and GPU ids the compute queue hands out (ASSAY_LOCAL_MAX_RUNS,
   * ASSAY_LOCAL_GPUS); undefined on other providers, whose runs take no queue.
   */
  readonly localCapacity: LocalCapacity | undefined;
}

export interface JwtConfig {
  readonly jwksUrl: string | undefined;
  readonly jwksFile: string | undefined;
  readonly issuer: string;
  readonly audience: string;
}

export { ConfigError };

function jwtConfig(env: Env): JwtConfig | undefined {
  const issuer = readSetting(env, 'ASSAY_JWT_ISSUER');
  const audience = readSetting(env, 'ASSAY_JWT_AUDIENCE');
  const jwksUrl = readSetting(env, 'ASSAY_JWT_JWKS_URL');
  const jwksFile = readSetting(env, 'ASSAY_JWT_JWKS_FILE');
  if (!issuer && !audience && !jwksUrl && !jwksFile) return undefined;
  if (!issuer || !audience)
    throw new ConfigError('ASSAY_JWT_ISSUER and ASSAY_JWT_AUDIENCE must be set together');
  if (!jwksUrl === !jwksFile)
    throw new ConfigError('set exactly one of ASSAY_JWT_JWKS_URL and ASSAY_JWT_JWKS_FILE');
  if (jwksUrl) checkJwksUrl(jwksUrl);
  return Object.freeze({ issuer, audience, jwksUrl, jwksFile });
}

/**
 * Keys fetched over plain http could be swapped on the way, and with them every login: only loopback may
 * skip TLS.
 */
function checkJwksUrl(jwksUrl: string): void {
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    throw new ConfigError('ASSAY_JWT_JWKS_URL must be an http(s) URL');
  }
  if (url.protocol === 'https:') return;
  if (url.protocol !== 'http:') throw new ConfigError('ASSAY_JWT_JWKS_URL must be an http(s) URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host !== 'localhost' && host !== '::1' && !/^127\.\d+\.\d+\.\d+$/.test(host))
    throw new ConfigError(
      `ASSAY_JWT_JWKS_URL must be https (plain http is allowed only to a loopback host), got host ${host}`,
    );
}

function metricsScope(env: Env): Scope | undefined {
  const scope = readSetting(env, 'ASSAY_METRICS_SCOPE');
  if (scope === undefined) return undefined;
  if (!isScope(scope))
    throw new ConfigError(`ASSAY_METRICS_SCOPE must be a scope name, got ${JSON.stringify(scope)}`);
  return scope;
}

/**
 * The pre-shared orchestrator key, which must be one of our agent keys (the service stores its hash
 * at start).
 */
function orchestratorKey(env: Env): string | undefined {
  const key = readSetting(env, 'ASSAY_ORCHESTRATOR_KEY');
  if (key === undefined) return undefined;
  // The message never echoes the value: it is a credential.
  if (parseToken(key)?.kind !== 'agent') {
    throw new ConfigError(
      'ASSAY_ORCHESTRATOR_KEY must be an agent key: sk_agent_ followed by 32 hex digits and 43 base64url characters (generate one offline)',
    );
  }
  return key;
}

/** Reads and validates the service configuration; throws ConfigError naming the bad variable. */
export function loadConfig(env: Env = process.env, overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  const config: { -readonly [K in keyof ServiceConfig]: ServiceConfig[K] } = {
    host: readSetting(env, 'ASSAY_HOST'),
    port: readSetting(env, 'PORT'),
    databaseUrl: readSetting(env, 'DATABASE_URL'),
    dataDir: path.resolve(readSetting(env, 'ASSAY_DATA_DIR')),
    pgStatementTimeoutMs: readSetting(env, 'ASSAY_PG_STATEMENT_TIMEOUT_MS'),
    pgIdleInTransactionTimeoutMs: readSetting(env, 'ASSAY_PG_IDLE_IN_TX_TIMEOUT_MS'),
    shutdownTimeoutMs: readSetting(env, 'ASSAY_SHUTDOWN_TIMEOUT_S'),
    workers: 1,
    logLevel: readSetting(env, 'ASSAY_LOG_LEVEL'),
    bodyLimitBytes: readSetting(env, 'ASSAY_BODY_LIMIT_BYTES'),
    apiKeyTtlDays: readSetting(env, 'ASSAY_API_KEY_TTL_DAYS'),
    databaseListenUrl: readSetting(env, 'ASSAY_DATABASE_LISTEN_URL'),
    authCacheTtlMs: readSetting(env, 'ASSAY_AUTH_CACHE_S'),
    authRecheckMs: readSetting(env, 'ASSAY_AUTH_RECHECK_S'),
    authCacheMaxEntries: readSetting(env, 'ASSAY_AUTH_CACHE_MAX'),
    watchdogTimeoutMs: readSetting(env, 'ASSAY_WATCHDOG_TIMEOUT_S'),
    watchdogIntervalMs: readSetting(env, 'ASSAY_WATCHDOG_INTERVAL_S'),
    runControlMaxWaiting: readSetting(env, 'ASSAY_RUN_CONTROL_MAX_WAITING'),
    workerKeyGraceMs: readSetting(env, 'ASSAY_WORKER_KEY_GRACE_S'),
    metricsGraceMs: readSetting(env, 'ASSAY_METRICS_GRACE_S'),
    metricKeysPerRun: readSetting(env, 'ASSAY_METRIC_KEYS_PER_RUN'),
    runLogMaxBytes: readSetting(env, 'ASSAY_RUN_LOG_MAX_MB') * 1024 * 1024,
    curveCachePoints: readSetting(env, 'ASSAY_CURVE_CACHE_POINTS'),
    exchangeTokenTtlMs: readSetting(env, 'ASSAY_EXCHANGE_TOKEN_TTL_S'),
    authFailureLimit: readSetting(env, 'ASSAY_AUTH_FAILURE_LIMIT'),
    metricsScope: metricsScope(env),
    reconcileIntervalMs: readSetting(env, 'ASSAY_RECONCILE_INTERVAL_S'),
    reconcileGiveUpMs: readSetting(env, 'ASSAY_RECONCILE_GIVE_UP_S'),
    jwt: jwtConfig(env),
    publicUrl: '',
    storage: undefined as never,
    searchEnabled: readSetting(env, 'ASSAY_SEARCH'),
    // pdf.js takes a few times a document's size; 100 MB is the largest PDF read (text-extraction.ts).
    textExtraction: Object.freeze({
      timeoutMs: readSetting(env, 'ASSAY_TEXT_EXTRACTION_TIMEOUT_S'),
      maxHeapMb: 1024,
    }),
    inlineMaxBytes: readSetting(env, 'ASSAY_INLINE_MAX_BYTES'),
    orchestratorKey: orchestratorKey(env),
    ec2: readSetting(env, 'ASSAY_COMPUTE') === 'ec2' ? ec2Config(env) : undefined,
    slurm: readSetting(env, 'ASSAY_COMPUTE') === 'slurm' ? slurmConfig(env) : undefined,
    compute: readSetting(env, 'ASSAY_COMPUTE') as ComputeKind,
    local: readSetting(env, 'ASSAY_COMPUTE') === 'local' ? localCompute(env) : undefined,
    localCapacity: readSetting(env, 'ASSAY_COMPUTE') === 'local' ? localCapacity(env) : undefined,
    ...overrides,
  };
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  config.publicUrl =
    overrides.publicUrl ?? readSetting(env, 'ASSAY_PUBLIC_URL') ?? `http://${host}:${config.port}`;
  config.storage =
    overrides.storage ?? storageConfig(env, { dataDir: config.dataDir, publicUrl: config.publicUrl });
  config.workers = overrides.workers ?? workerCount(env, config.databaseUrl);
  return Object.freeze(config);
}

/**
 * ASSAY_WORKERS, or the cores this process may use on PostgreSQL; PGlite is one process's database (its files
 * are opened by one process only), so it takes one worker.
 */
function workerCount(env: Env, databaseUrl: string | undefined): number {
  const set = readSetting(env, 'ASSAY_WORKERS');
  if (databaseUrl === undefined) {
    if (set > 1)
      throw new ConfigError(
        `ASSAY_WORKERS=${set} needs PostgreSQL (DATABASE_URL): the embedded PGlite database is one process's`,
      );
    return 1;
  }
  return set > 0 ? set : availableParallelism();
}
