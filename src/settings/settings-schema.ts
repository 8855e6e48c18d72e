// Every environment variable the service, the worker, the compute providers and the orchestrator read: the
// one place that says its type, default and meaning. Loaders read through `readSetting`, and the docs'
// settings tables are generated from this table (scripts/settings-docs.ts), so adding a setting is one
// entry here.
import { LAUNCH_PATTERNS } from '@assay/contract';

/**
 * Who reads a setting: `assay server` (service), `assay worker` (worker), a compute provider,
 * the orchestrator.
 */
export type Component = 'service' | 'worker' | 'compute' | 'orchestrator';

/**
 * The docs table a setting is listed in (README.md: Configuration, Orchestration settings,
 * Compute providers).
 */
export type SettingsTable = 'service' | 'orchestration' | 'compute';

interface Described {
  readonly description: string;
  readonly readBy: readonly Component[];
  readonly table: SettingsTable;
  /** How the docs show (in Markdown) a default that is derived or means something when unset. */
  readonly shownDefault?: string;
  /** Holds a credential: error messages never echo its value. */
  readonly secret?: true;
}

export interface TextSetting extends Described {
  readonly kind: 'text';
  readonly default?: string;
  readonly choices?: readonly string[];
  readonly pattern?: RegExp;
  /** What the pattern wants, for the error message. */
  readonly expected?: string;
}
/** An http(s) URL, read without trailing slashes (base URLs that paths are appended to) unless kept. */
export interface UrlSetting extends Described {
  readonly kind: 'url';
  readonly keepTrailingSlash?: true;
}
export interface IntegerSetting extends Described {
  readonly kind: 'integer';
  readonly default: number;
  readonly min: number;
  readonly max?: number;
}
/**
 * Seconds in the environment (fractions allowed, so tests can use short timeouts), milliseconds when read.
 */
export interface SecondsSetting extends Described {
  readonly kind: 'seconds';
  readonly default: number;
}
export interface FlagSetting extends Described {
  readonly kind: 'flag';
  readonly default: boolean;
}

export type Setting = TextSetting | UrlSetting | IntegerSetting | SecondsSetting | FlagSetting;

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
const serviceOnly = ['service'] as const;
const orchestration = ['service', 'worker', 'orchestrator'] as const;
const ec2 = ['compute'] as const;
const slurm = ['compute'] as const;

export const SETTINGS = {
  PORT: {
    kind: 'integer',
    default: 8080,
    min: 0,
    max: 65535,
    readBy: serviceOnly,
    table: 'service',
    description: 'Port to listen on',
  },
  ASSAY_HOST: {
    kind: 'text',
    default: '127.0.0.1',
    readBy: serviceOnly,
    table: 'service',
    description: 'Address to listen on (use `0.0.0.0` in a container)',
  },
  DATABASE_URL: {
    kind: 'text',
    pattern: /^postgres(ql)?:\/\//,
    expected: 'a postgres:// or postgresql:// URL',
    secret: true,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'unset: embedded PGlite',
    description: 'PostgreSQL connection string (`postgres://…`)',
  },
  ASSAY_DATABASE_LISTEN_URL: {
    kind: 'text',
    pattern: /^postgres(ql)?:\/\//,
    expected: 'a postgres:// or postgresql:// URL',
    secret: true,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'unset: `DATABASE_URL`',
    description:
      'Where the one `LISTEN` session per replica connects (revocation notices); set it when `DATABASE_URL` goes through a pooler in transaction mode',
  },
  ASSAY_DATA_DIR: {
    kind: 'text',
    default: './.assay-data',
    readBy: ['service', 'worker'],
    table: 'service',
    description:
      'Data directory of the embedded default (the PGlite database lives in `pglite/`, local instances in `instances/`); made private to the service user (`0700`/`0600`) at every start',
  },
  ASSAY_PG_STATEMENT_TIMEOUT_MS: {
    kind: 'integer',
    default: 30_000,
    min: 0,
    readBy: serviceOnly,
    table: 'service',
    description:
      'PostgreSQL cancels a statement running longer (503 `database_timeout`); `0`: no limit. Migrations have none',
  },
  ASSAY_PG_IDLE_IN_TX_TIMEOUT_MS: {
    kind: 'integer',
    default: 60_000,
    min: 0,
    readBy: serviceOnly,
    table: 'service',
    description:
      'PostgreSQL ends a session idle this long inside a transaction, releasing its locks; `0`: no limit',
  },
  ASSAY_SHUTDOWN_TIMEOUT_S: {
    kind: 'seconds',
    default: 30,
    readBy: serviceOnly,
    table: 'service',
    description:
      'On SIGTERM/SIGINT, how long requests in flight may finish before their connections are closed',
  },
  ASSAY_WORKERS: {
    kind: 'integer',
    default: 0,
    min: 0,
    max: 256,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'the core count on PostgreSQL; `1` on PGlite',
    description:
      'HTTP worker processes of `assay server` (also `--workers N`) sharing its port; `0`: the default. Above 1 a primary process migrates, bootstraps and runs Temporal, the watchdog and the reconciler once, and restarts a worker that dies. The embedded PGlite database allows only `1`',
  },
  ASSAY_LOG_LEVEL: {
    kind: 'text',
    default: 'info',
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    readBy: serviceOnly,
    table: 'service',
    description: 'pino log level: fatal, error, warn, info, debug, trace, silent',
  },
  ASSAY_BODY_LIMIT_BYTES: {
    kind: 'integer',
    default: 2 * MIB,
    min: 1024,
    readBy: serviceOnly,
    table: 'service',
    description: 'Largest accepted JSON body (larger: 413)',
  },
  ASSAY_API_KEY_TTL_DAYS: {
    kind: 'integer',
    default: 90,
    min: 1,
    max: 3650,
    readBy: serviceOnly,
    table: 'service',
    description: 'Default lifetime of minted keys',
  },
  ASSAY_AUTH_CACHE_S: {
    kind: 'seconds',
    default: 300,
    readBy: serviceOnly,
    table: 'service',
    description:
      'How long a verified token stays cached (never past its key’s expiry); revocations reach every replica at once through PostgreSQL `LISTEN/NOTIFY`',
  },
  ASSAY_AUTH_RECHECK_S: {
    kind: 'seconds',
    default: 30,
    readBy: serviceOnly,
    table: 'service',
    description:
      'How often a replica re-reads whether its cached keys were revoked, a bound on staleness should a revocation notice go unheard',
  },
  ASSAY_AUTH_CACHE_MAX: {
    kind: 'integer',
    default: 10_000,
    min: 1,
    readBy: serviceOnly,
    table: 'service',
    description: 'Entries of the auth cache (LRU)',
  },
  ASSAY_AUTH_FAILURE_LIMIT: {
    kind: 'integer',
    default: 100,
    min: 0,
    readBy: serviceOnly,
    table: 'service',
    description:
      'Failed authentications one client address may make per minute; beyond, its unverified tokens get 429 with `Retry-After` until the minute ends (`0`: no limit)',
  },
  ASSAY_METRICS_SCOPE: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'unset: `/metrics` open',
    description:
      'Scope a bearer token needs to read `/metrics` (e.g. `admin`); unset, anyone who reaches the port can read it',
  },
  ASSAY_WATCHDOG_TIMEOUT_S: {
    kind: 'seconds',
    default: 900,
    readBy: serviceOnly,
    table: 'service',
    description: 'A running run with no heartbeat for this long fails with reason `heartbeat_timeout`',
  },
  ASSAY_WATCHDOG_INTERVAL_S: {
    kind: 'seconds',
    default: 30,
    readBy: serviceOnly,
    table: 'service',
    description: 'How often the watchdog looks',
  },
  ASSAY_RUN_CONTROL_MAX_WAITING: {
    kind: 'integer',
    default: 10_000,
    min: 0,
    max: 1_000_000,
    readBy: serviceOnly,
    table: 'service',
    description:
      "Runner control long-polls (`GET …/runs/{r}/control`) one replica holds open at once; past it a poll answers at once and the runner's next one tries again",
  },
  ASSAY_RECONCILE_INTERVAL_S: {
    kind: 'seconds',
    default: 60,
    readBy: serviceOnly,
    table: 'orchestration',
    description:
      'How often the reconciler starts workflows of managed runs left without one (Temporal was down) and checks live managed runs for a workflow that closed without concluding them',
  },
  ASSAY_RECONCILE_GIVE_UP_S: {
    kind: 'seconds',
    default: 900,
    readBy: serviceOnly,
    table: 'orchestration',
    description: 'A managed run whose workflow cannot be started for this long fails `provision_failed`',
  },
  ASSAY_WORKER_KEY_GRACE_S: {
    kind: 'seconds',
    default: 3600,
    readBy: serviceOnly,
    table: 'service',
    description: 'How long a worker key keeps working after its run ended (for output uploads)',
  },
  ASSAY_METRICS_GRACE_S: {
    kind: 'seconds',
    default: 300,
    readBy: serviceOnly,
    table: 'service',
    description:
      'How long after its run ended a run still takes metric points and console log lines (a runner’s last batches)',
  },
  ASSAY_METRIC_KEYS_PER_RUN: {
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 100_000,
    readBy: serviceOnly,
    table: 'service',
    description:
      'Distinct metric keys one run may log; a batch that would bring more answers 409 `metric_key_limit` and stores none of its points',
  },
  ASSAY_RUN_LOG_MAX_MB: {
    kind: 'integer',
    default: 100,
    min: 1,
    max: 100_000,
    readBy: serviceOnly,
    table: 'service',
    description:
      'Console log one run may keep, in MiB of text before compression; past it the service keeps the first and the last half and counts what it dropped between them',
  },
  ASSAY_CURVE_CACHE_POINTS: {
    kind: 'integer',
    default: 250_000,
    min: 0,
    readBy: serviceOnly,
    table: 'service',
    description:
      'Points of ended runs’ compared curves one service instance keeps in memory (about 50 bytes each), so a second look at a comparison reads no points; `0`: none kept',
  },
  ASSAY_EXCHANGE_TOKEN_TTL_S: {
    kind: 'seconds',
    default: 900,
    readBy: serviceOnly,
    table: 'orchestration',
    description: 'How long a managed instance’s one-time exchange token can buy its worker key',
  },
  ASSAY_PUBLIC_URL: {
    kind: 'url',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: '`http://<host>:<port>`',
    description: 'Base URL clients use to reach the service; local-storage upload URLs point here',
  },
  ASSAY_SEARCH: {
    kind: 'flag',
    default: true,
    readBy: serviceOnly,
    table: 'service',
    description: 'Full-text search; `off` makes `GET /search` answer 503',
  },
  ASSAY_TEXT_EXTRACTION_TIMEOUT_S: {
    kind: 'seconds',
    default: 60,
    readBy: serviceOnly,
    table: 'service',
    description:
      'Longest PDF text extraction at finalize (in a worker thread); past it the asset is ready without its text',
  },
  ASSAY_INLINE_MAX_BYTES: {
    kind: 'integer',
    default: 256 * 1024,
    min: 0,
    readBy: serviceOnly,
    table: 'service',
    description: 'Largest inline asset content (larger: 400 `inline_too_large`; use presigned uploads)',
  },
  ASSAY_STORAGE: {
    kind: 'text',
    default: 'local',
    choices: ['local', 's3'],
    readBy: serviceOnly,
    table: 'service',
    description:
      'Object storage: `local` (files in `ASSAY_STORAGE_DIR`, served by the service on HMAC-signed, expiring URLs) or `s3`',
  },
  ASSAY_STORAGE_DIR: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: '`<ASSAY_DATA_DIR>/objects`',
    description: 'Directory of the local backend',
  },
  ASSAY_STORAGE_SECRET: {
    kind: 'text',
    secret: true,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'generated once into `<ASSAY_DATA_DIR>/storage-secret`',
    description: 'HMAC key of local signed URLs (32+ characters; replicas must share it)',
  },
  S3_BUCKET: {
    kind: 'text',
    pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'required with `s3`',
    description: 'Bucket of the `s3` backend',
  },
  S3_REGION: {
    kind: 'text',
    default: 'us-east-1',
    readBy: serviceOnly,
    table: 'service',
    description: 'Region of the bucket',
  },
  S3_ENDPOINT: {
    kind: 'url',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'AWS',
    description: 'Endpoint of an S3-compatible store (SeaweedFS, MinIO, …)',
  },
  S3_FORCE_PATH_STYLE: {
    kind: 'flag',
    default: false,
    readBy: serviceOnly,
    table: 'service',
    description: 'Path-style bucket addressing (most S3-compatible stores need `on`)',
  },
  S3_ACCESS_KEY_ID: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'AWS default chain',
    description: 'Access key; set with `S3_SECRET_ACCESS_KEY`, or neither',
  },
  S3_SECRET_ACCESS_KEY: {
    kind: 'text',
    secret: true,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'AWS default chain',
    description: 'Secret key',
  },
  ASSAY_S3_CHECKSUMS: {
    kind: 'text',
    default: 'auto',
    choices: ['auto', 'off'],
    readBy: serviceOnly,
    table: 'service',
    description:
      '`auto`: finalize trusts the store’s sha256 if a probe shows the store refuses a body not matching the signed `x-amz-checksum-sha256`; `off`: finalize reads every byte back',
  },
  ASSAY_UPLOAD_URL_TTL_S: {
    kind: 'integer',
    default: 3600,
    min: 1,
    max: 604_800,
    readBy: serviceOnly,
    table: 'service',
    description: 'Lifetime of presigned upload and download URLs (up to 7 days)',
  },
  ASSAY_MULTIPART_THRESHOLD_BYTES: {
    kind: 'integer',
    default: 5 * GIB,
    min: 1,
    readBy: serviceOnly,
    table: 'service',
    description: 'Components larger than this upload in parts (at most 5 GiB with `s3`)',
  },
  ASSAY_MULTIPART_PART_BYTES: {
    kind: 'integer',
    default: 512 * MIB,
    min: 1,
    max: 5 * GIB,
    readBy: serviceOnly,
    table: 'service',
    description: 'Part size (5 MiB–5 GiB with `s3`; grown when a file would need over 10,000 parts)',
  },
  ASSAY_JWT_ISSUER: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'unset: access tokens off',
    description: 'Expected `iss` of identity-provider access tokens',
  },
  ASSAY_JWT_AUDIENCE: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'required with the issuer',
    description: 'Expected `aud`',
  },
  ASSAY_JWT_JWKS_URL: {
    kind: 'url',
    keepTrailingSlash: true,
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'one of the two with the issuer',
    description:
      'JWKS URL of the identity provider (or `ASSAY_JWT_JWKS_FILE`); `https`, or plain `http` to a loopback host only',
  },
  ASSAY_JWT_JWKS_FILE: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'service',
    shownDefault: 'one of the two with the issuer',
    description: 'JWKS as a local JSON file',
  },
  ASSAY_ORCHESTRATOR_KEY: {
    kind: 'text',
    secret: true,
    readBy: ['service', 'worker'],
    table: 'service',
    shownDefault: 'unset',
    description:
      'Pre-shared orchestrator key (`sk_agent_…`, generated offline) for standalone Temporal workers; give the workers the same value. Stored (as a hash) at start; a different key with the same id stops the start. Never logged',
  },

  ASSAY_ORCHESTRATOR: {
    kind: 'flag',
    default: true,
    readBy: serviceOnly,
    table: 'orchestration',
    description: 'Managed runs and sweeps through Temporal; off: those endpoints answer 503',
  },
  TEMPORAL_ADDRESS: {
    kind: 'text',
    pattern: /^[^\s/:]+:\d{1,5}$/,
    expected: 'host:port',
    readBy: orchestration,
    table: 'orchestration',
    shownDefault: 'unset: embedded dev server',
    description: 'host:port of a Temporal cluster; unset, `assay server` starts `temporal server start-dev`',
  },
  TEMPORAL_NAMESPACE: {
    kind: 'text',
    default: 'default',
    readBy: orchestration,
    table: 'orchestration',
    description: 'Temporal namespace of the workflows',
  },
  TEMPORAL_UI_URL: {
    kind: 'url',
    readBy: serviceOnly,
    table: 'orchestration',
    shownDefault: 'embedded: its UI',
    description: 'Temporal UI base URL, for `workflow_url` links',
  },
  TEMPORAL_CLI_PATH: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'orchestration',
    shownDefault: 'PATH, then ./.venv/bin',
    description: 'The `temporal` binary the embedded dev server runs',
  },
  ASSAY_TEMPORAL_PORT: {
    kind: 'integer',
    default: 7233,
    min: 1,
    max: 65535,
    readBy: serviceOnly,
    table: 'orchestration',
    description:
      'gRPC port of the embedded dev server. Taken by a Temporal this data dir did not start, the service starts its own on a free port (said in the log); to share one, set TEMPORAL_ADDRESS',
  },
  ASSAY_TEMPORAL_UI_PORT: {
    kind: 'integer',
    default: 8233,
    min: 1,
    max: 65535,
    readBy: serviceOnly,
    table: 'orchestration',
    description: 'UI port of the embedded dev server',
  },
  ASSAY_COMPUTE: {
    kind: 'text',
    default: 'local',
    choices: ['local', 'ec2', 'slurm'],
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description:
      'Compute provider of managed runs: `local` (sandboxed processes on this machine), `ec2` or `slurm` (batch jobs on a Slurm cluster)',
  },
  ASSAY_LOCAL_COMPUTE_USERS: {
    kind: 'text',
    choices: ['admins', 'all'],
    readBy: ['service', 'worker'],
    table: 'orchestration',
    shownDefault: '`all` with the sandbox in place, else `admins`',
    description:
      "Whose launch blocks `local` runs: `admins` (both written and provisioned by admins), or `all` (everyone's)",
  },
  ASSAY_LOCAL_SANDBOX: {
    kind: 'text',
    default: 'auto',
    choices: ['auto', 'on', 'off'],
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description:
      '`local` runs each command in a bubblewrap sandbox as `ASSAY_LOCAL_RUN_AS`: `auto` when it works on this machine, `on` refuses to start without it, `off` runs plain process groups as the service’s own user',
  },
  ASSAY_LOCAL_RUNNER: {
    kind: 'text',
    default: 'slots',
    choices: ['slots', 'spawn'],
    readBy: ['worker'],
    table: 'orchestration',
    description:
      "`local`'s runners: `slots` keeps a long-lived `assay run` per concurrent run (sandboxed like an instance, reused only for runs of the same launch author and experiment, cleared between runs); `spawn` starts one per run. Launches with `cpus`, `memory_mb` or GPUs are always spawned",
  },
  ASSAY_LOCAL_RUN_AS: {
    kind: 'text',
    default: 'assay-run',
    pattern: /^[a-z_][a-z0-9_-]{0,31}$/,
    expected: 'a user name',
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description:
      'The unprivileged OS user sandboxed `local` commands run as (the service must run as root to switch to it; `scripts/setup-local-sandbox.sh` creates it)',
  },
  ASSAY_LOCAL_GPUS: {
    kind: 'text',
    pattern: /^(none|\d{1,3}(,\d{1,3}){0,63})$/,
    expected: '`none` or comma-separated GPU ids such as 0,1,2,3',
    readBy: ['service', 'worker'],
    table: 'orchestration',
    shownDefault: 'from `nvidia-smi -L` when present, else none',
    description:
      'GPU ids `local` hands out: a run with `launch.gpus: N` waits in the queue until N are free and sees only those (CUDA_VISIBLE_DEVICES); two runs never share one',
  },
  ASSAY_LOCAL_MAX_RUNS: {
    kind: 'integer',
    default: 32,
    min: 1,
    max: 10_000,
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description:
      'Managed runs `local` runs at once; more wait in the fair queue (priority, then users take turns)',
  },
  ASSAY_WORKER: {
    kind: 'flag',
    default: true,
    readBy: serviceOnly,
    table: 'orchestration',
    description: '`assay server` runs a Temporal worker in-process; off when workers run separately',
  },
  ASSAY_SEARCH_WORKER: {
    kind: 'text',
    default: 'embedded',
    choices: ['embedded', 'off'],
    readBy: serviceOnly,
    table: 'orchestration',
    description:
      "`embedded`: `assay server`, when it runs its in-process worker, also runs the search worker (the Python sampler of random, sobol and tpe sweeps) as a child process, restarted if it dies. `off` when it runs elsewhere (`python -m assay_search_worker`, compose's `search-worker`); `assay worker` never starts one. Without a search worker those sweeps answer 503",
  },
  ASSAY_SEARCH_PYTHON: {
    kind: 'text',
    readBy: serviceOnly,
    table: 'orchestration',
    shownDefault: '`./.venv-search/bin/python`',
    description:
      'The Python the embedded search worker runs with; it must have search-worker/requirements.txt installed (`bash scripts/setup-search-worker.sh` builds the default, and `npm start` runs it)',
  },
  ASSAY_TASK_QUEUE: {
    kind: 'text',
    readBy: orchestration,
    table: 'orchestration',
    shownDefault: 'unset: `assay-<installation id>`',
    description:
      'Task queue of the workflows and activities. Unset, each deployment uses its own (its installation id is kept in its database) and `assay worker` asks the service for it; set, it wins, and every worker of the deployment must poll it',
  },
  ASSAY_WORKER_MAX_ACTIVITIES: {
    kind: 'integer',
    default: 50,
    min: 1,
    max: 10_000,
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description: 'Activities a worker runs at once (each managed run holds one while watched)',
  },
  ASSAY_WORKER_MAX_WORKFLOWS: {
    kind: 'integer',
    default: 100,
    min: 2,
    max: 10_000,
    readBy: ['service', 'worker'],
    table: 'orchestration',
    description: 'Workflow tasks a worker runs at once',
  },
  ASSAY_SERVICE_URL: {
    kind: 'url',
    readBy: ['worker'],
    table: 'orchestration',
    shownDefault: 'embedded: the service itself',
    description: 'The service URL `assay worker` calls',
  },
  ASSAY_RUNNER_SERVER_URL: {
    kind: 'url',
    readBy: ['service', 'worker'],
    table: 'orchestration',
    shownDefault: '`ASSAY_SERVICE_URL`',
    description: 'The service URL instances get as SERVICE_SERVER_URL',
  },
  ASSAY_RUN_START_TIMEOUT_S: {
    kind: 'seconds',
    default: 900,
    readBy: orchestration,
    table: 'orchestration',
    description: 'A provisioned run that has not started by then fails `provision_failed`',
  },
  ASSAY_RUN_SILENCE_TIMEOUT_S: {
    kind: 'seconds',
    default: 900,
    readBy: orchestration,
    table: 'orchestration',
    description: 'A managed run silent this long fails `heartbeat_timeout`',
  },
  ASSAY_RUN_CANCEL_GRACE_S: {
    kind: 'seconds',
    default: 60,
    readBy: orchestration,
    table: 'orchestration',
    description: 'After a cancel, how long the runner may take to stop before its instance is terminated',
  },
  ASSAY_RUN_MAX_RECOVERIES: {
    kind: 'integer',
    default: 2,
    min: 0,
    max: 100,
    readBy: orchestration,
    table: 'orchestration',
    description: 'Instance losses a managed run recovers from (a new run resumes from the newest checkpoint)',
  },
  ASSAY_RUN_POLL_S: {
    kind: 'seconds',
    default: 5,
    readBy: orchestration,
    table: 'orchestration',
    description: "How often a watched run's state is read",
  },
  ASSAY_RUN_WATCH_SLICE_S: {
    kind: 'seconds',
    default: 3600,
    readBy: orchestration,
    table: 'orchestration',
    description: 'Length of one watch activity; the workflow continues as new every 24 slices',
  },
  ASSAY_RUN_OUTPUTS_TIMEOUT_S: {
    kind: 'seconds',
    default: 300,
    readBy: orchestration,
    table: 'orchestration',
    description: 'How long a finished run may take to finalize its outputs',
  },

  EC2_REGION: {
    kind: 'text',
    default: 'us-east-1',
    pattern: /^[a-z]{2}(-[a-z]+)+-\d+$/,
    readBy: ec2,
    table: 'compute',
    description: 'Region',
  },
  EC2_ENDPOINT: {
    kind: 'url',
    readBy: ec2,
    table: 'compute',
    shownDefault: 'AWS',
    description: 'Endpoint of an EC2-compatible API',
  },
  EC2_AMI: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.image),
    readBy: ec2,
    table: 'compute',
    shownDefault: '`launch_config.image`',
    description: 'Image of run instances; it must have `assay` on PATH',
  },
  EC2_INSTANCE_TYPE: {
    kind: 'text',
    default: 't3.micro',
    pattern: new RegExp(LAUNCH_PATTERNS.instanceType),
    readBy: ec2,
    table: 'compute',
    description: 'Instance type when `launch_config.instance_type` is not given',
  },
  EC2_SUBNET_ID: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.subnetId),
    readBy: ec2,
    table: 'compute',
    shownDefault: 'default VPC',
    description: 'Subnet of run instances',
  },
  EC2_SECURITY_GROUP_IDS: {
    kind: 'text',
    readBy: ec2,
    table: 'compute',
    shownDefault: 'default group',
    description: 'Comma-separated `sg-…` ids; unset: the VPC’s default group',
  },
  EC2_IAM_INSTANCE_PROFILE: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.iamInstanceProfile),
    readBy: ec2,
    table: 'compute',
    shownDefault: 'none',
    description: 'Instance profile name or ARN of run instances',
  },
  EC2_ALLOWED_IMAGES: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`EC2_AMI` only',
    description: 'Comma-separated images `launch.image` may name; `*`: any',
  },
  EC2_ALLOWED_INSTANCE_TYPES: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`EC2_INSTANCE_TYPE` only',
    description: 'Instance types `launch.instance_type` may name; `*`: any',
  },
  EC2_ALLOWED_SUBNET_IDS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`EC2_SUBNET_ID` only',
    description: 'Subnets `launch.subnet_id` may name; `*`: any',
  },
  EC2_ALLOWED_SECURITY_GROUP_IDS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`EC2_SECURITY_GROUP_IDS` only',
    description: 'Security groups `launch.security_group_ids` may name; `*`: any',
  },
  EC2_ALLOWED_IAM_INSTANCE_PROFILES: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`EC2_IAM_INSTANCE_PROFILE` only',
    description: 'Instance profiles `launch.iam_instance_profile` may name; `*`: any',
  },

  ASSAY_SLURM_SSH: {
    kind: 'text',
    pattern: /^[a-z_][a-z0-9_.-]{0,31}@[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/,
    expected: 'user@host or user@host:port',
    readBy: slurm,
    table: 'compute',
    shownDefault: 'unset: the local `sbatch`',
    description:
      'Submit over SSH to this login node (`user@host[:port]`) instead of running `sbatch` here; needs `ASSAY_SLURM_SSH_KEY` and `ASSAY_SLURM_KNOWN_HOSTS`',
  },
  ASSAY_SLURM_SSH_KEY: {
    kind: 'text',
    readBy: slurm,
    table: 'compute',
    description: 'Private key file for `ASSAY_SLURM_SSH`',
  },
  ASSAY_SLURM_KNOWN_HOSTS: {
    kind: 'text',
    readBy: slurm,
    table: 'compute',
    description:
      'known_hosts file holding the login node’s host key; the host key is always checked (StrictHostKeyChecking=yes)',
  },
  ASSAY_SLURM_RUNNER: {
    kind: 'text',
    default: 'assay',
    readBy: slurm,
    table: 'compute',
    description:
      'The runner as the compute nodes start it (words split on spaces): `assay` on their PATH, or e.g. `node /opt/assay/bin/assay.js`',
  },
  ASSAY_SLURM_WORKDIR: {
    kind: 'text',
    default: '/tmp/assay-runs',
    readBy: slurm,
    table: 'compute',
    description:
      "Where on the cluster jobs start, on a file system every node shares: a directory per run below it (its ./outputs), and each job's log beside it",
  },
  ASSAY_SLURM_PARTITION: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.slurmName),
    readBy: slurm,
    table: 'compute',
    shownDefault: 'the cluster’s default',
    description: 'Partition when `launch.slurm.partition` is not given',
  },
  ASSAY_SLURM_ACCOUNT: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.slurmName),
    readBy: slurm,
    table: 'compute',
    shownDefault: 'the user’s default',
    description: 'Account when `launch.slurm.account` is not given',
  },
  ASSAY_SLURM_QOS: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.slurmName),
    readBy: slurm,
    table: 'compute',
    shownDefault: 'the cluster’s default',
    description: 'QOS when `launch.slurm.qos` is not given',
  },
  ASSAY_SLURM_TIME_LIMIT: {
    kind: 'text',
    pattern: new RegExp(LAUNCH_PATTERNS.slurmTime),
    readBy: slurm,
    table: 'compute',
    shownDefault: 'the partition’s default',
    description: 'Time limit when `launch.slurm.time_limit` is not given',
  },
  ASSAY_SLURM_ALLOWED_PARTITIONS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`ASSAY_SLURM_PARTITION` only',
    description: 'Comma-separated partitions `launch.slurm.partition` may name; `*`: any',
  },
  ASSAY_SLURM_ALLOWED_ACCOUNTS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`ASSAY_SLURM_ACCOUNT` only',
    description: 'Accounts `launch.slurm.account` may name; `*`: any',
  },
  ASSAY_SLURM_ALLOWED_QOS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: '`ASSAY_SLURM_QOS` only',
    description: 'QOS names `launch.slurm.qos` may name; `*`: any',
  },
  ASSAY_SLURM_ALLOWED_GRES: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: 'none',
    description:
      'Generic resources `launch.slurm.gres` may name (`gpu`, `gpu:a100`; counts are free); `*`: any',
  },
  ASSAY_SLURM_ALLOWED_OPTIONS: {
    kind: 'text',
    readBy: ['service', 'compute'],
    table: 'compute',
    shownDefault: 'none',
    description:
      'Extra sbatch option names `launch.slurm.extra` may use (`--constraint,--exclusive`); never `*`',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;
