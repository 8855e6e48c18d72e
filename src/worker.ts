// The Temporal worker: the workflows of workflows/ and the activities of activities/, calling the service
// with the orchestrator key and running instances through one compute provider. `assay worker` and the
// embedded `assay server` both start it here.
import path from 'node:path';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { OrchestratorApi } from '../activities/orchestrator-api.ts';
import type { ComputeProvider } from './compute/compute-provider.ts';

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The service the activities call, and the orchestrator key they call it with. */
  serviceUrl: string;
  orchestratorKey: string;
  /** The service URL instances get (SERVICE_SERVER_URL). */
  runnerServerUrl: string;
  provider: ComputeProvider;
  maxActivities: number;
  maxWorkflows: number;
  /**
   * A bundle made earlier (tests share one); otherwise the workflows are bundled at start (a few seconds).
   */
  workflowBundle?: WorkflowBundleWithSourceMap;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker stopped; rejects if it crashed. */
  done: Promise<void>;
  stop(): Promise<void>;
}

// Beside this file's own kind: the sources under Node's type stripping, the built .js in an
// installed package.
const workflowsPath = path.resolve(
  import.meta.dirname,
  `../workflows/index${path.extname(import.meta.filename)}`,
);

let bundling: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * Bundles the workflows once per process; webpack takes seconds and the bundle never changes while running.
 */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundling ??= bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  return bundling;
}

const ignore = () => undefined;
const quietBundlerLogger = {
  log: ignore,
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: console.error,
};

let runtimeInstalled = false;

/**
 * Temporal's core logs to the console at INFO by default; WARN keeps the operator's terminal for what
 * matters. The runtime is per process and fixed by its first user, so embedders (tests) call this before
 * anything else.
 */
export function installRuntimeOnce() {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by the embedding process (tests): keep theirs.
  }
}

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  installRuntimeOnce();
  const connection = await NativeConnection.connect({ address: settings.address });
  const api = new OrchestratorApi({
    serverUrl: settings.serviceUrl,
    apiKey: settings.orchestratorKey,
    timeout: 30,
  });
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    workflowBundle: settings.workflowBundle ?? (await workflowBundle()),
    activities: createActivities({
      api,
      provider: settings.provider,
      runnerServerUrl: settings.runnerServerUrl,
    }),
    maxConcurrentActivityTaskExecutions: settings.maxActivities,
    maxConcurrentLocalActivityExecutions: settings.maxActivities,
    maxConcurrentWorkflowTaskExecutions: settings.maxWorkflows,
    // Long watch activities end at their next heartbeat; the saga resumes them on the next worker.
    shutdownGraceTime: '5s',
  });
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
