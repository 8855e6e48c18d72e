import { prepareOrchestration } from '../orchestrator/embedded.ts';
import { orchestratorConfig, type OrchestratorConfig } from '../orchestrator/orchestrator-config.ts';
import type { DestinationStream } from 'pino';
import { bootstrapKeyPath } from './admin/bootstrap-key-file.ts';
import { loggerOptions } from './app.ts';
import { loadConfig, type ServiceConfig } from './config.ts';
import { makePrivateDir } from './data-dir.ts';
import { mintEmbeddedOrchestratorKey } from './orchestration/orchestrator-keys.ts';
import { createService } from './service.ts';

/** Runs the service (and, on the embedded default, Temporal and a worker) until SIGINT or SIGTERM. */
export async function runServer(
  config: ServiceConfig = loadConfig(),
  orchestration: OrchestratorConfig = orchestratorConfig(process.env),
): Promise<void> {
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
    {
      address,
      database: service.db.driver,
      docs: `${address}/docs`,
      ui: `${config.publicUrl}/ui/`,
      temporalUi: orchestrating.temporalUiUrl,
    },
    `Assay listening on ${address}`,
  );
  if (process.stdout.isTTY) announceWebUi(config.publicUrl, service.bootstrapKey !== undefined);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    const log = service.app.log;
    log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    // A backstop: closing the orchestrator or the database must not hang the exit either.
    setTimeout(() => {
      log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 15_000).unref();
    // HTTP drains first (its requests may need Temporal and the database), then the worker and Temporal
    // (whose activities call this service, and whose key revocation needs the database), the database last.
    service
      .drain(config.shutdownTimeoutMs)
      .then(async (inTime) => {
        if (!inTime) log.warn('requests still in flight at the shutdown deadline were cut off');
        await orchestrating.close();
        await service.close();
      })
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/**
 * A person at a terminal sees the key at once (the first-run flow of the embedded default); anything else
 * (container logs, files, log shippers) gets only the path of the mode-600 file that holds it.
 * Deliberately outside the structured log either way.
 */
function announceBootstrapKey(key: string, dataDir: string): void {
  const file = bootstrapKeyPath(dataDir);
  process.stdout.write(
    process.stdout.isTTY
      ? `bootstrap admin key: ${key}\n(also in ${file} until \`assay admin bootstrap-key\` takes it)\n`
      : `bootstrap admin key written to ${file}; take it with \`assay admin bootstrap-key\`\n`,
  );
}

/** Synchronous, so the log lines and the plain lines written around them reach the terminal in order. */
async function terminalLogStream(): Promise<DestinationStream> {
  const pretty = (await import('pino-pretty')).default;
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
}

/** The last lines a first start shows: where the UI is and what to sign in with. */
function announceWebUi(publicUrl: string, bootstrapped: boolean): void {
  const credential = bootstrapped
    ? 'the bootstrap admin key printed above'
    : "an API key (on a fresh data directory, `npx assay admin bootstrap-key` prints the first admin's)";
  process.stdout.write(`\nWeb UI: open ${publicUrl}/ui/ and sign in with ${credential}.\n`);
}
