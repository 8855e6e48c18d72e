// The orchestrator's settings (Temporal connection, worker, saga timing), read once from the environment.
import path from 'node:path';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';
import type { SagaSettings } from '../../workflows/saga-types.ts';

export type TemporalSettings = {
  /** host:port of a Temporal frontend; undefined: `assay server` starts the embedded dev server. */
  readonly address: string | undefined;
  readonly namespace: string;
  /** Base URL of the Temporal UI, for links on runs and sweeps. */
  readonly uiUrl: string | undefined;
  /** ASSAY_TASK_QUEUE; undefined: the deployment's own, `assay-<installation id>`. */
  readonly taskQueue: string | undefined;
};

export type OrchestratorConfig = {
  /** Off: no Temporal at all; provision and sweeps answer 503. */
  readonly enabled: boolean;
  readonly temporal: TemporalSettings;
  /** `assay server` runs a worker in its own process (the embedded default). */
  readonly inProcessWorker: boolean;
  /** Beside its in-process worker, `assay server` runs the Python search worker as a child process. */
  readonly searchWorker: { readonly embedded: boolean; readonly python: string | undefined };
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
  /** Where the local compute provider keeps its instance records (`<dataDir>/instances`). */
  readonly dataDir: string;
  readonly saga: SagaSettings;
};

/** Validates and freezes the orchestrator settings; a bad value throws ConfigError naming its variable. */
export function orchestratorConfig(env: Env): OrchestratorConfig {
  const serviceUrl = readSetting(env, 'ASSAY_SERVICE_URL');
  return Object.freeze({
    enabled: readSetting(env, 'ASSAY_ORCHESTRATOR'),
    temporal: Object.freeze({
      address: readSetting(env, 'TEMPORAL_ADDRESS'),
      namespace: readSetting(env, 'TEMPORAL_NAMESPACE'),
      uiUrl: readSetting(env, 'TEMPORAL_UI_URL'),
      taskQueue: readSetting(env, 'ASSAY_TASK_QUEUE'),
    }),
    inProcessWorker: readSetting(env, 'ASSAY_WORKER'),
    searchWorker: Object.freeze({
      embedded: readSetting(env, 'ASSAY_SEARCH_WORKER') === 'embedded',
      python: readSetting(env, 'ASSAY_SEARCH_PYTHON'),
    }),
    devServer: Object.freeze({
      port: readSetting(env, 'ASSAY_TEMPORAL_PORT'),
      uiPort: readSetting(env, 'ASSAY_TEMPORAL_UI_PORT'),
      cliPath: readSetting(env, 'TEMPORAL_CLI_PATH'),
    }),
    worker: Object.freeze({
      maxActivities: readSetting(env, 'ASSAY_WORKER_MAX_ACTIVITIES'),
      maxWorkflows: readSetting(env, 'ASSAY_WORKER_MAX_WORKFLOWS'),
    }),
    serviceUrl,
    runnerServerUrl: readSetting(env, 'ASSAY_RUNNER_SERVER_URL') ?? serviceUrl,
    orchestratorKey: readSetting(env, 'ASSAY_ORCHESTRATOR_KEY'),
    dataDir: path.resolve(readSetting(env, 'ASSAY_DATA_DIR')),
    saga: Object.freeze({
      startTimeoutMs: readSetting(env, 'ASSAY_RUN_START_TIMEOUT_S'),
      silenceTimeoutMs: readSetting(env, 'ASSAY_RUN_SILENCE_TIMEOUT_S'),
      cancelGraceMs: readSetting(env, 'ASSAY_RUN_CANCEL_GRACE_S'),
      maxRecoveries: readSetting(env, 'ASSAY_RUN_MAX_RECOVERIES'),
      pollMs: readSetting(env, 'ASSAY_RUN_POLL_S'),
      watchSliceMs: readSetting(env, 'ASSAY_RUN_WATCH_SLICE_S'),
      slicesPerExecution: 24,
      outputsTimeoutMs: readSetting(env, 'ASSAY_RUN_OUTPUTS_TIMEOUT_S'),
    }),
  });
}
