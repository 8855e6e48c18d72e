import path from 'node:path';
import { ec2Config, type Ec2Config } from '../compute/ec2-config.ts';
import { parseToken } from './auth/api-key-token.ts';
import { ConfigError } from './config-error.ts';
import { flag, integer, text, type Env } from './env-values.ts';
import { storageConfig, type StorageConfig } from './storage/storage-config.ts';

/** Everything the service reads from its environment, validated once at start and frozen. */
export interface ServiceConfig {
  readonly host: string;
  readonly port: number;
  /** PostgreSQL connection string; when absent the embedded PGlite database in `dataDir` is used. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly apiKeyTtlDays: number;
  /** How long a verified token stays cached; bounds how late a revocation is seen by other replicas. */
  readonly authCacheTtlMs: number;
  readonly authCacheMaxEntries: number;
  readonly watchdogTimeoutMs: number;
  readonly watchdogIntervalMs: number;
  /** How often managed runs left pending without a workflow get it started, and how long until they fail instead. */
  readonly reconcileIntervalMs: number;
  readonly reconcileGiveUpMs: number;
  /** Worker keys stop working this long after their run ended (time to finish output uploads). */
  readonly workerKeyGraceMs: number;
  readonly jwt: JwtConfig | undefined;
  /** The service's own base URL as clients reach it; local-storage upload URLs point here. */
  readonly publicUrl: string;
  readonly searchEnabled: boolean;
  /** Largest inline asset (reports, environment snapshots); larger content goes through presigned uploads. */
  readonly inlineMaxBytes: number;
  readonly storage: StorageConfig;
  /** A pre-shared agent key for standalone Temporal workers, stored at start for the orchestrator user; never logged. */
  readonly orchestratorKey: string | undefined;
  /** The EC2 settings when ASSAY_COMPUTE is ec2: variations' launch blocks are checked against their allowlists. */
  readonly ec2: Ec2Config | undefined;
}

export interface JwtConfig {
  readonly jwksUrl: string | undefined;
  readonly jwksFile: string | undefined;
  readonly issuer: string;
  readonly audience: string;
}

export { ConfigError };

/** One row of the README's configuration table: the variable, its default and what it means. */
export const SETTINGS = [
  ['ASSAY_HOST', '127.0.0.1', 'Address to listen on (use 0.0.0.0 in a container)'],
  ['PORT', '8080', 'Port to listen on'],
  ['DATABASE_URL', '(unset: embedded PGlite)', 'PostgreSQL connection string'],
  [
    'ASSAY_DATA_DIR',
    './.assay-data',
    'Data directory of the embedded default (PGlite database, local storage)',
  ],
  ['ASSAY_LOG_LEVEL', 'info', 'pino log level (fatal, error, warn, info, debug, trace, silent)'],
  ['ASSAY_BODY_LIMIT_BYTES', '2097152', 'Largest accepted JSON body'],
  ['ASSAY_API_KEY_TTL_DAYS', '90', 'Default lifetime of user and agent keys'],
  [
    'ASSAY_AUTH_CACHE_TTL_MS',
    '3000',
    'How long a verified token is cached (revocations reach other replicas within this)',
  ],
  ['ASSAY_AUTH_CACHE_MAX', '10000', 'Entries in the auth cache (LRU)'],
  ['ASSAY_WATCHDOG_TIMEOUT_S', '900', 'A running run silent this long fails with reason heartbeat_timeout'],
  ['ASSAY_WATCHDOG_INTERVAL_S', '30', 'How often the watchdog looks'],
  [
    'ASSAY_RECONCILE_INTERVAL_S',
    '60',
    'How often managed runs left pending without a workflow (Temporal was down) get their workflow started',
  ],
  [
    'ASSAY_RECONCILE_GIVE_UP_S',
    '900',
    'A managed run whose workflow cannot be started for this long fails `provision_failed`',
  ],
  ['ASSAY_WORKER_KEY_GRACE_S', '3600', 'How long a worker key outlives the end of its run'],
  [
    'ASSAY_PUBLIC_URL',
    'http://<host>:<port>',
    'Base URL clients use to reach the service (local-storage upload URLs point here)',
  ],
  ['ASSAY_SEARCH', 'on', 'Full-text search: on, or off (then GET /search answers 503)'],
  ['ASSAY_INLINE_MAX_BYTES', '262144', 'Largest inline asset content'],
  ['ASSAY_JWT_ISSUER', '(unset: JWT login off)', 'Expected `iss` of identity-provider access tokens'],
  ['ASSAY_JWT_AUDIENCE', '(required with the issuer)', 'Expected `aud`'],
  ['ASSAY_JWT_JWKS_URL', '', 'JWKS URL of the identity provider (or ASSAY_JWT_JWKS_FILE)'],
  ['ASSAY_JWT_JWKS_FILE', '', 'JWKS as a local JSON file'],
  [
    'ASSAY_ORCHESTRATOR_KEY',
    '(unset)',
    'Pre-shared orchestrator key (sk_agent_…) for standalone Temporal workers; give the workers the same value',
  ],
] as const;

/** Seconds in the environment, milliseconds in the config; fractions allowed so tests can use short timeouts. */
function seconds(env: Env, name: string, fallbackSeconds: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallbackSeconds * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  }
  return Math.round(value * 1000);
}

function jwtConfig(env: Env): JwtConfig | undefined {
  const issuer = text(env, 'ASSAY_JWT_ISSUER');
  const audience = text(env, 'ASSAY_JWT_AUDIENCE');
  const jwksUrl = text(env, 'ASSAY_JWT_JWKS_URL');
  const jwksFile = text(env, 'ASSAY_JWT_JWKS_FILE');
  if (!issuer && !audience && !jwksUrl && !jwksFile) return undefined;
  if (!issuer || !audience)
    throw new ConfigError('ASSAY_JWT_ISSUER and ASSAY_JWT_AUDIENCE must be set together');
  if (!jwksUrl === !jwksFile)
    throw new ConfigError('set exactly one of ASSAY_JWT_JWKS_URL and ASSAY_JWT_JWKS_FILE');
  if (jwksUrl && !/^https?:\/\//.test(jwksUrl))
    throw new ConfigError('ASSAY_JWT_JWKS_URL must be an http(s) URL');
  return Object.freeze({ issuer, audience, jwksUrl, jwksFile });
}

/** The pre-shared orchestrator key, which must be one of our agent keys (the service stores its hash at start). */
function orchestratorKey(env: Env): string | undefined {
  const key = text(env, 'ASSAY_ORCHESTRATOR_KEY');
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
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const config: { -readonly [K in keyof ServiceConfig]: ServiceConfig[K] } = {
    host: text(env, 'ASSAY_HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    dataDir: path.resolve(text(env, 'ASSAY_DATA_DIR') ?? '.assay-data'),
    logLevel: text(env, 'ASSAY_LOG_LEVEL') ?? 'info',
    bodyLimitBytes: integer(env, 'ASSAY_BODY_LIMIT_BYTES', 2 * 1024 * 1024, 1024),
    apiKeyTtlDays: integer(env, 'ASSAY_API_KEY_TTL_DAYS', 90, 1, 3650),
    authCacheTtlMs: integer(env, 'ASSAY_AUTH_CACHE_TTL_MS', 3000, 0, 60_000),
    authCacheMaxEntries: integer(env, 'ASSAY_AUTH_CACHE_MAX', 10_000, 1),
    watchdogTimeoutMs: seconds(env, 'ASSAY_WATCHDOG_TIMEOUT_S', 900),
    watchdogIntervalMs: seconds(env, 'ASSAY_WATCHDOG_INTERVAL_S', 30),
    reconcileIntervalMs: seconds(env, 'ASSAY_RECONCILE_INTERVAL_S', 60),
    reconcileGiveUpMs: seconds(env, 'ASSAY_RECONCILE_GIVE_UP_S', 900),
    workerKeyGraceMs: seconds(env, 'ASSAY_WORKER_KEY_GRACE_S', 3600),
    jwt: jwtConfig(env),
    publicUrl: '',
    storage: undefined as never,
    searchEnabled: flag(env, 'ASSAY_SEARCH', true),
    inlineMaxBytes: integer(env, 'ASSAY_INLINE_MAX_BYTES', 256 * 1024, 0),
    orchestratorKey: orchestratorKey(env),
    ec2: text(env, 'ASSAY_COMPUTE') === 'ec2' ? ec2Config(env) : undefined,
    ...overrides,
  };
  const publicUrl =
    text(env, 'ASSAY_PUBLIC_URL') ??
    `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`;
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) throw new ConfigError('ASSAY_PUBLIC_URL must be an http(s) URL');
  config.publicUrl = overrides.publicUrl ?? publicUrl.replace(/\/+$/, '');
  config.storage =
    overrides.storage ?? storageConfig(env, { dataDir: config.dataDir, publicUrl: config.publicUrl });
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(config.logLevel)) {
    throw new ConfigError(
      `ASSAY_LOG_LEVEL must be one of ${levels.join(', ')}, got ${JSON.stringify(config.logLevel)}`,
    );
  }
  return Object.freeze(config);
}
