// The orchestrator's settings (Temporal connection, worker, saga timing), read once from the environment.
import { ConfigError } from '../server/config-error.ts';
import { flag, integer, text, type Env } from '../server/env-values.ts';
import type { SagaSettings } from '../../workflows/saga-types.ts';

export type TemporalSettings = {
  /** host:port of a Temporal frontend; undefined: `assay server` starts the embedded dev server. */
  readonly address: string | undefined;
  readonly namespace: string;
  /** Base URL of the Temporal UI, for links on runs and sweeps. */
  readonly uiUrl: string | undefined;
  readonly taskQueue: string;
};

export type OrchestratorConfig = {
  /** Off: no Temporal at all; provision and sweeps answer 503. */
  readonly enabled: boolean;
  readonly temporal: TemporalSettings;
  /** `assay server` runs a worker in its own process (the embedded default). */
  readonly inProcessWorker: boolean;
  readonly devServer: {
    readonly port: number;
    readonly uiPort: number;
    readonly cliPath: string | undefined;
  };
  readonly worker: { readonly maxActivities: number; readonly maxWorkflows: number };
  /** The service URL the standalone worker calls, and the one instances get as SERVICE_SERVER_URL. */
  readonly serviceUrl: string | undefined;
  readonly runnerServerUrl: string | undefined;
  /** The pre-shared orchestrator key of a standalone worker (the embedded worker mints its own). */
  readonly orchestratorKey: string | undefined;
  readonly saga: SagaSettings;
};

/** Rows for the README's configuration table, like SETTINGS in src/server/config.ts. */
export const ORCHESTRATOR_SETTINGS = [
  ['ASSAY_ORCHESTRATOR', 'on', 'Managed runs and sweeps through Temporal; off: those endpoints answer 503'],
  [
    'TEMPORAL_ADDRESS',
    '(unset: embedded dev server)',
    'host:port of a Temporal cluster; unset, `assay server` starts `temporal server start-dev`',
  ],
  ['TEMPORAL_NAMESPACE', 'default', 'Temporal namespace of the workflows'],
  ['TEMPORAL_UI_URL', '(embedded: its UI)', 'Temporal UI base URL, for `workflow_url` links'],
  ['TEMPORAL_CLI_PATH', '(PATH, then ./.venv/bin)', 'The `temporal` binary the embedded dev server runs'],
  ['ASSAY_TEMPORAL_PORT', '7233', 'gRPC port of the embedded dev server'],
  ['ASSAY_TEMPORAL_UI_PORT', '8233', 'UI port of the embedded dev server'],
  [
    'ASSAY_COMPUTE',
    'local',
    'Compute provider of managed runs: `local` (process groups on this machine) or `ec2`',
  ],
  ['ASSAY_WORKER', 'on', '`assay server` runs a Temporal worker in-process; off when workers run separately'],
  ['ASSAY_TASK_QUEUE', 'assay', 'Task queue of the workflows and activities'],
  [
    'ASSAY_WORKER_MAX_ACTIVITIES',
    '50',
    'Activities a worker runs at once (each managed run holds one while watched)',
  ],
  ['ASSAY_WORKER_MAX_WORKFLOWS', '100', 'Workflow tasks a worker runs at once'],
  ['ASSAY_SERVICE_URL', '(embedded: the service itself)', 'The service URL `assay worker` calls'],
  ['ASSAY_RUNNER_SERVER_URL', '(ASSAY_SERVICE_URL)', 'The service URL instances get as SERVICE_SERVER_URL'],
  [
    'ASSAY_RUN_START_TIMEOUT_S',
    '900',
    'A provisioned run that has not started by then fails `provision_failed`',
  ],
  ['ASSAY_RUN_SILENCE_TIMEOUT_S', '900', 'A managed run silent this long fails `heartbeat_timeout`'],
  [
    'ASSAY_RUN_CANCEL_GRACE_S',
    '60',
    'After a cancel, how long the runner may take to stop before its instance is terminated',
  ],
  [
    'ASSAY_RUN_MAX_RECOVERIES',
    '2',
    'Instance losses a managed run recovers from (a new run resumes from the newest checkpoint)',
  ],
  ['ASSAY_RUN_POLL_S', '5', "How often a watched run's state is read"],
  [
    'ASSAY_RUN_WATCH_SLICE_S',
    '3600',
    'Length of one watch activity; the workflow continues as new every 24 slices',
  ],
  ['ASSAY_RUN_OUTPUTS_TIMEOUT_S', '300', 'How long a finished run may take to finalize its outputs'],
] as const;

/** Seconds in the environment, milliseconds inside; fractions allowed so tests can use short timeouts. */
function seconds(env: Env, name: string, fallbackSeconds: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallbackSeconds * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigError(`${name} must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return Math.round(value * 1000);
}

function url(env: Env, name: string): string | undefined {
  const value = text(env, name);
  if (value !== undefined && !/^https?:\/\/[^\s/]+/.test(value))
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value?.replace(/\/+$/, '');
}

/** Validates and freezes the orchestrator settings; a bad value throws ConfigError naming its variable. */
export function orchestratorConfig(env: Env): OrchestratorConfig {
  const address = text(env, 'TEMPORAL_ADDRESS');
  if (address !== undefined && !/^[^\s/:]+:\d{1,5}$/.test(address)) {
    throw new ConfigError(`TEMPORAL_ADDRESS must be host:port, got ${JSON.stringify(address)}`);
  }
  const serviceUrl = url(env, 'ASSAY_SERVICE_URL');
  return Object.freeze({
    enabled: flag(env, 'ASSAY_ORCHESTRATOR', true),
    temporal: Object.freeze({
      address,
      namespace: text(env, 'TEMPORAL_NAMESPACE') ?? 'default',
      uiUrl: url(env, 'TEMPORAL_UI_URL'),
      taskQueue: text(env, 'ASSAY_TASK_QUEUE') ?? 'assay',
    }),
    inProcessWorker: flag(env, 'ASSAY_WORKER', true),
    devServer: Object.freeze({
      port: integer(env, 'ASSAY_TEMPORAL_PORT', 7233, 1, 65535),
      uiPort: integer(env, 'ASSAY_TEMPORAL_UI_PORT', 8233, 1, 65535),
      cliPath: text(env, 'TEMPORAL_CLI_PATH'),
    }),
    worker: Object.freeze({
      maxActivities: integer(env, 'ASSAY_WORKER_MAX_ACTIVITIES', 50, 1, 10_000),
      maxWorkflows: integer(env, 'ASSAY_WORKER_MAX_WORKFLOWS', 100, 2, 10_000),
    }),
    serviceUrl,
    runnerServerUrl: url(env, 'ASSAY_RUNNER_SERVER_URL') ?? serviceUrl,
    orchestratorKey: text(env, 'ASSAY_ORCHESTRATOR_KEY'),
    saga: Object.freeze({
      startTimeoutMs: seconds(env, 'ASSAY_RUN_START_TIMEOUT_S', 900),
      silenceTimeoutMs: seconds(env, 'ASSAY_RUN_SILENCE_TIMEOUT_S', 900),
      cancelGraceMs: seconds(env, 'ASSAY_RUN_CANCEL_GRACE_S', 60),
      maxRecoveries: integer(env, 'ASSAY_RUN_MAX_RECOVERIES', 2, 0, 100),
      pollMs: seconds(env, 'ASSAY_RUN_POLL_S', 5),
      watchSliceMs: seconds(env, 'ASSAY_RUN_WATCH_SLICE_S', 3600),
      slicesPerExecution: 24,
      outputsTimeoutMs: seconds(env, 'ASSAY_RUN_OUTPUTS_TIMEOUT_S', 300),
    }),
  });
}
