// `assay worker`: a standalone Temporal worker for production, scaled apart from the service.
import path from 'node:path';
import { createComputeProvider } from '../compute/create-provider.ts';
import { ConfigError } from '../settings/config-error.ts';
import type { Env } from '../settings/env-values.ts';
import { startWorker } from '../worker.ts';
import { orchestratorConfig } from './orchestrator-config.ts';

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
    settings = {
      address: config.temporal.address!,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      serviceUrl: config.serviceUrl!,
      orchestratorKey: config.orchestratorKey!,
      runnerServerUrl: config.runnerServerUrl ?? config.serviceUrl!,
      provider: createComputeProvider({
        env,
        local: { stateDir: path.join(config.dataDir, 'instances') },
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
    `assay worker: polling task queue ${settings.taskQueue} on ${settings.address} (compute: ${settings.provider.kind})\n`,
  );
  const stop = () => void worker.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.done;
  return 0;
}
