// How `assay server` brings up orchestration: a Temporal cluster (TEMPORAL_ADDRESS) or the embedded dev
// server, the client the routes use, and, unless turned off, a worker in the same process.
import path from 'node:path';
import { createComputeProvider } from '../compute/create-provider.ts';
import type { Orchestrator } from './orchestrator.ts';
import type { Env } from '../settings/env-values.ts';
import type { RunningWorker } from '../worker.ts';
import type { OrchestratorConfig } from './orchestrator-config.ts';
import { findTemporalCli, startDevServer, type DevServer } from './temporal-dev-server.ts';
import { TemporalOrchestrator } from './temporal-orchestrator.ts';
import { startEmbeddedSearchWorker, type SearchWorkerProcess } from './search-worker-process.ts';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ServerOrchestration {
  /** Undefined when orchestration is off or Temporal could not be found: provision and sweeps answer 503. */
  orchestrator: Orchestrator | undefined;
  /** The Temporal frontend the orchestrator talks to (the dev server's, when embedded). */
  address: string | undefined;
  temporalUiUrl: string | undefined;
  /**
   * Starts the in-process worker once the service answers (its activities call the service). The service
   * mints the worker's orchestrator key: its database is the service's, not the orchestrator's.
   */
  startWorker(service: {
    serviceUrl: string;
    mintOrchestratorKey(): Promise<OrchestratorKey>;
  }): Promise<void>;
  close(): Promise<void>;
}

/** A key for the embedded worker, revoked when the worker stops. */
export interface OrchestratorKey {
  token: string;
  revoke(): Promise<void>;
}

const off = (): ServerOrchestration => ({
  orchestrator: undefined,
  address: undefined,
  temporalUiUrl: undefined,
  startWorker: async () => undefined,
  close: async () => undefined,
});

export async function prepareOrchestration(
  config: OrchestratorConfig,
  deps: { dataDir: string; env: Env; log: Log },
): Promise<ServerOrchestration> {
  if (!config.enabled) return off();
  let devServer: DevServer | undefined;
  let address = config.temporal.address;
  if (!address) {
    const cli = findTemporalCli(config.devServer.cliPath);
    if (!cli) {
      deps.log.warn(
        {},
        'managed runs are off: no `temporal` binary (run `bash scripts/setup-temporal.sh`, set TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a cluster)',
      );
      return off();
    }
    devServer = await startDevServer({
      cli,
      dataDir: path.join(deps.dataDir, 'temporal'),
      port: config.devServer.port,
      uiPort: config.devServer.uiPort,
      namespace: config.temporal.namespace,
    });
    address = devServer.address;
    if (devServer.movedFrom !== undefined)
      deps.log.warn(
        { address, ui: devServer.uiUrl, taken: devServer.movedFrom },
        `port ${devServer.movedFrom} is taken by a Temporal this data dir did not start (another deployment's?): started this data dir's own dev server on ${address} instead; to share that one, set TEMPORAL_ADDRESS=127.0.0.1:${devServer.movedFrom}`,
      );
    deps.log.info({ address, ui: devServer.uiUrl, reused: !devServer.owned }, 'Temporal dev server ready');
  }
  const temporal = { ...config.temporal, address, uiUrl: config.temporal.uiUrl ?? devServer?.uiUrl };
  const orchestrator = await TemporalOrchestrator.connect({ temporal, saga: config.saga });
  let worker: RunningWorker | undefined;
  let searchWorker: SearchWorkerProcess | undefined;
  let revokeKey: (() => Promise<void>) | undefined;
  return {
    orchestrator,
    address,
    temporalUiUrl: temporal.uiUrl,
    async startWorker({ serviceUrl, mintOrchestratorKey }) {
      if (!config.inProcessWorker) return;
      const key = await mintOrchestratorKey();
      revokeKey = key.revoke;
      const provider = createComputeProvider({
        env: deps.env,
        local: { stateDir: path.join(deps.dataDir, 'instances'), dataDir: deps.dataDir },
      });
      // Loaded here, not at the top: the service must not load the worker (and through it the client) unless
      // it runs one.
      const { startWorker } = await import('../worker.ts');
      // The deployment's queue: the service named it (useDeployment) before it listened.
      const { taskQueue } = await orchestrator.deployment();
      worker = await startWorker({
        address,
        namespace: temporal.namespace,
        taskQueue,
        serviceUrl,
        orchestratorKey: key.token,
        runnerServerUrl: config.runnerServerUrl ?? serviceUrl,
        provider,
        maxActivities: config.worker.maxActivities,
        maxWorkflows: config.worker.maxWorkflows,
      });
      deps.log.info(
        {
          taskQueue,
          namespace: temporal.namespace,
          compute: provider.kind,
          ...('setup' in provider ? { local: provider.setup } : {}),
        },
        'in-process Temporal worker running',
      );
      if (config.searchWorker.embedded)
        searchWorker = startEmbeddedSearchWorker(config.searchWorker, {
          address,
          namespace: temporal.namespace,
          deploymentQueue: taskQueue,
          log: deps.log,
        });
    },
    async close() {
      await searchWorker?.stop();
      await worker?.stop();
      await revokeKey?.();
      await orchestrator.close();
      await devServer?.stop();
    },
  };
}
