import { prepareOrchestration } from '../orchestrator/embedded.ts';
import { orchestratorConfig, type OrchestratorConfig } from '../orchestrator/orchestrator-config.ts';
import { loggerOptions } from './app.ts';
import { loadConfig, type ServiceConfig } from './config.ts';
import { makePrivateDir } from './data-dir.ts';
import { mintEmbeddedOrchestratorKey } from './orchestration/orchestrator-keys.ts';
import { announceBootstrapKey, announceWebUi, listeningFields, terminalLogStream } from './server-output.ts';
import { createService } from './service.ts';
import { onShutdownSignal } from './shutdown-signal.ts';

/**
 * Runs the service (and, on the embedded default, Temporal and a worker) until SIGINT or SIGTERM: in this
 * process, or with `config.workers` above 1 as a primary process and that many HTTP workers
 * (server-cluster.ts).
 */
export async function runServer(
  config: ServiceConfig = loadConfig(),
  orchestration: OrchestratorConfig = orchestratorConfig(process.env),
): Promise<void> {
  if (config.workers > 1) {
    const cluster = (await import('node:cluster')).default;
    const { runPrimary, runHttpWorker } = await import('./server-cluster.ts');
    return cluster.isWorker ? runHttpWorker(config, orchestration) : runPrimary(config, orchestration);
  }
  // A person at a terminal reads lines; anything else (containers, log shippers) gets JSON.
  const stream = process.stdout.isTTY ? await terminalLogStream() : undefined;
  const startupLog = (await import('pino')).default({ level: config.logLevel }, stream);
  // What this process and its children (Temporal, local runs) create is the service user's alone; what an
  // older version left open is repaired by createService.
  process.umask(0o077);
  await makePrivateDir(config.dataDir);
  const orchestrating = await prepareOrchestration(orchestration, {
    dataDir: config.dataDir,
    env: process.env,
    log: startupLog,
  });
  if (orchestrating.temporalUiUrl) process.stdout.write(`Temporal UI: ${orchestrating.temporalUiUrl}\n`);
  const service = await createService(config, {
    orchestrator: orchestrating.orchestrator,
    logger: stream ? { ...loggerOptions(config.logLevel), stream } : undefined,
  });
  if (service.bootstrapKey) announceBootstrapKey(service.bootstrapKey, config.dataDir);
  const address = await service.app.listen({ host: config.host, port: config.port });
  await orchestrating.startWorker({
    serviceUrl: config.publicUrl,
    mintOrchestratorKey: () => mintEmbeddedOrchestratorKey(service.db),
  });
  service.app.log.info(
    listeningFields(address, {
      database: service.db.driver,
      publicUrl: config.publicUrl,
      temporalUi: orchestrating.temporalUiUrl,
      workers: 1,
    }),
    `Assay listening on ${address}`,
  );
  if (process.stdout.isTTY) announceWebUi(config.publicUrl, service.bootstrapKey !== undefined);
  const log = service.app.log;
  // HTTP drains first (its requests may need Temporal and the database), then the worker and Temporal
  // (whose activities call this service, and whose key revocation needs the database), the database last.
  onShutdownSignal(log, config.shutdownTimeoutMs, async () => {
    const inTime = await service.drain(config.shutdownTimeoutMs);
    if (!inTime) log.warn('requests still in flight at the shutdown deadline were cut off');
    await orchestrating.close();
    await service.close();
  });
}
