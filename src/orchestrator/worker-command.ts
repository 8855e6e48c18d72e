// `assay worker`: a standalone Temporal worker for production, scaled apart from the service.
import path from 'node:path';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import { createComputeProvider } from '../compute/create-provider.ts';
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { startWorker } from '../worker.ts';
import { orchestratorConfig } from './orchestrator-config.ts';

const ASK_FOR_MS = 120_000;

/**
 * The task queue the service starts its workflows on (`GET /orchestrator/deployment`), retried while the
 * service comes up. A configured queue or namespace that differs from the service's is refused: that worker
 * would wait on a queue nobody fills, or take another deployment's work.
 */
async function serviceQueue(
  api: OrchestratorApi,
  mine: { taskQueue: string | undefined; namespace: string },
): Promise<string> {
  const deadline = Date.now() + ASK_FOR_MS;
  for (;;) {
    try {
      const { task_queue, namespace } = await api.deployment();
      if (namespace !== mine.namespace)
        throw new ConfigError(
          `the service starts workflows in Temporal namespace ${namespace}, this worker polls ${mine.namespace} (set TEMPORAL_NAMESPACE alike)`,
        );
      if (mine.taskQueue && mine.taskQueue !== task_queue)
        throw new ConfigError(
          `the service starts workflows on task queue ${task_queue}, not ASSAY_TASK_QUEUE=${mine.taskQueue} (set it alike, or unset it on both)`,
        );
      return task_queue;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const status = (error as { statusCode?: number }).statusCode ?? 0;
      // A refusal (a wrong key, say) does not go away by asking again.
      if (status >= 400 && status < 500)
        throw new ConfigError(`the service refused to name its task queue: ${(error as Error).message}`);
      if (Date.now() > deadline) {
        if (mine.taskQueue) {
          process.stderr.write(
            `assay worker: could not ask the service for its task queue (${(error as Error).message}); polling ASSAY_TASK_QUEUE=${mine.taskQueue}\n`,
          );
          return mine.taskQueue;
        }
        throw new ConfigError(
          `could not ask the service for its task queue (${(error as Error).message}); is ASSAY_SERVICE_URL right and the service up?`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

/** Runs the managed-run workflows and activities until SIGINT or SIGTERM; settings come from `env`. */
export async function workerCommand(env: Env = process.env): Promise<number> {
  let settings;
  try {
    const config = orchestratorConfig(env);
    const required = {
      TEMPORAL_ADDRESS: config.temporal.address,
      ASSAY_SERVICE_URL: config.serviceUrl,
      ASSAY_ORCHESTRATOR_KEY: config.orchestratorKey,
    };
    const missing = Object.keys(required).filter((name) => !required[name as keyof typeof required]);
    if (missing.length > 0) throw new ConfigError(`assay worker needs ${missing.join(', ')}`);
    const api = new OrchestratorApi({
      serverUrl: config.serviceUrl!,
      apiKey: config.orchestratorKey!,
      timeout: 30,
    });
    settings = {
      address: config.temporal.address!,
      namespace: config.temporal.namespace,
      taskQueue: await serviceQueue(api, config.temporal),
      serviceUrl: config.serviceUrl!,
      orchestratorKey: config.orchestratorKey!,
      runnerServerUrl: config.runnerServerUrl ?? config.serviceUrl!,
      provider: createComputeProvider({
        env,
        local: { stateDir: path.join(config.dataDir, 'instances'), dataDir: config.dataDir },
      }),
      maxActivities: config.worker.maxActivities,
      maxWorkflows: config.worker.maxWorkflows,
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`assay: ${error.message}\n`);
    return 2;
  }
  const worker = await startWorker(settings);
  process.stdout.write(
    `assay worker: polling task queue ${settings.taskQueue} in namespace ${settings.namespace} on ${settings.address} (compute: ${settings.provider.kind}${'setup' in settings.provider ? `, ${settings.provider.setup}` : ''})\n`,
  );
  const stop = () => void worker.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.done;
  return 0;
}
