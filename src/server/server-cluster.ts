// `assay server --workers N` (N > 1): a primary process and N HTTP workers sharing its port through
// node:cluster (the primary hands each new connection to the next worker in turn). The primary does what
// must happen once per start: the embedded Temporal dev server and the in-process Temporal worker (and the
// search worker), migrations, the bootstrap admin, the orchestrator keys, the watchdog and the reconciler;
// it serves no request. Each worker is the app alone on its own connection pool; what they keep in memory is
// either per process by design (caches told of changes through PostgreSQL LISTEN/NOTIFY, as replicas are)
// or shared through the primary over the cluster's IPC channel (/metrics, the auth failure limit).
import cluster, { type Worker } from 'node:cluster';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { prepareOrchestration, type ServerOrchestration } from '../orchestrator/embedded.ts';
import type { OrchestratorConfig } from '../orchestrator/orchestrator-config.ts';
import { loggerOptions } from './app.ts';
import type { ServiceConfig } from './config.ts';
import { makePrivateDir, repairDataDirModes } from './data-dir.ts';
import { serveClusterMetrics } from './http/cluster-metrics.ts';
import { isMessage, toPrimary, type FromPrimary } from './http/worker-messages.ts';
import { mintEmbeddedOrchestratorKey } from './orchestration/orchestrator-keys.ts';
import { announceBootstrapKey, announceWebUi, listeningFields, terminalLogStream } from './server-output.ts';
import { createHttpService, openServiceDatabase, settleDatabase, startBackgroundWork } from './service.ts';
import { onShutdownSignal } from './shutdown-signal.ts';

/** A worker that died is replaced after this pause, so one failing at every start does not spin. */
const RESTART_DELAY_MS = 1_000;

/** This process's log, and the service's logger options (the same stream at a terminal). */
async function processLog(config: ServiceConfig) {
  // A person at a terminal reads lines; anything else (containers, log shippers) gets JSON.
  const stream = process.stdout.isTTY ? await terminalLogStream() : undefined;
  const options = loggerOptions(config.logLevel);
  return { log: pino(options, stream), appLogger: stream ? { ...options, stream } : undefined };
}

/** The primary: the once-per-start work, then `config.workers` HTTP workers kept running until a signal. */
export async function runPrimary(config: ServiceConfig, orchestration: OrchestratorConfig): Promise<void> {
  const { log } = await processLog(config);
  process.umask(0o077);
  await makePrivateDir(config.dataDir);
  const orchestrating = await prepareOrchestration(orchestration, {
    dataDir: config.dataDir,
    env: process.env,
    log,
  });
  if (orchestrating.temporalUiUrl) process.stdout.write(`Temporal UI: ${orchestrating.temporalUiUrl}\n`);
  const db = await openServiceDatabase(config);
  let bootstrapKey: string | undefined;
  try {
    bootstrapKey = await settleDatabase(db, config, orchestrating.orchestrator);
  } catch (err) {
    await db.close();
    await orchestrating.close();
    throw err;
  }
  if (bootstrapKey) announceBootstrapKey(bootstrapKey, config.dataDir);
  // The primary's own process metrics join the workers' in every /metrics answer.
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  serveClusterMetrics(cluster, metrics);
  relayAuthFailures();
  const workers = superviseWorkers(config.workers, workerEnv(orchestrating), log);
  let address: string;
  try {
    address = await workers.started;
  } catch (err) {
    await workers.stop(config.shutdownTimeoutMs);
    await db.close();
    await orchestrating.close();
    throw err;
  }
  // Once the workers opened the object store (a local one's directories are made then).
  await repairDataDirModes(config, log);
  const background = startBackgroundWork(db, config, orchestrating.orchestrator, log);
  await orchestrating.startWorker({
    serviceUrl: config.publicUrl,
    mintOrchestratorKey: () => mintEmbeddedOrchestratorKey(db),
  });
  log.info(
    listeningFields(address, {
      database: db.driver,
      publicUrl: config.publicUrl,
      temporalUi: orchestrating.temporalUiUrl,
      workers: config.workers,
    }),
    `Assay listening on ${address}`,
  );
  if (process.stdout.isTTY) announceWebUi(config.publicUrl, bootstrapKey !== undefined);
  // As one process shuts down: HTTP first (every worker drains), then Temporal, the background, the database.
  onShutdownSignal(log, config.shutdownTimeoutMs, async () => {
    await workers.stop(config.shutdownTimeoutMs);
    await orchestrating.close();
    await background.stop();
    await db.close();
  });
}

/** One HTTP worker: the app on its own pool, its Temporal client on the primary's frontend, until a signal. */
export async function runHttpWorker(config: ServiceConfig, orchestration: OrchestratorConfig): Promise<void> {
  const { log, appLogger } = await processLog(config);
  process.umask(0o077);
  // The primary's environment names its Temporal frontend and turns the in-process worker off (workerEnv).
  const orchestrating = await prepareOrchestration(orchestration, {
    dataDir: config.dataDir,
    env: process.env,
    log,
  });
  const service = await createHttpService(config, {
    orchestrator: orchestrating.orchestrator,
    logger: appLogger,
  });
  // The primary logs the one "Assay listening" line once every worker listens.
  const address = await service.app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (at) => `HTTP worker ${cluster.worker?.id} accepting connections at ${at}`,
  });
  toPrimary({ assay: 'listening', address });
  onShutdownSignal(log, config.shutdownTimeoutMs, async () => {
    const inTime = await service.drain(config.shutdownTimeoutMs);
    if (!inTime) log.warn('requests still in flight at the shutdown deadline were cut off');
    await orchestrating.close();
    await service.close();
  });
}

/**
 * What a worker's environment adds to the primary's: the Temporal frontend the primary started or found,
 * with no in-process worker of its own; or no orchestration, when the primary has none.
 */
function workerEnv(orchestrating: ServerOrchestration): Record<string, string> {
  if (!orchestrating.orchestrator || !orchestrating.address) return { ASSAY_ORCHESTRATOR: 'off' };
  return {
    TEMPORAL_ADDRESS: orchestrating.address,
    ...(orchestrating.temporalUiUrl ? { TEMPORAL_UI_URL: orchestrating.temporalUiUrl } : {}),
    ASSAY_WORKER: 'off',
    ASSAY_SEARCH_WORKER: 'off',
  };
}

/** A failed authentication one worker saw, told to the others' failure limits. */
function relayAuthFailures(): void {
  cluster.on('message', (from, message) => {
    if (!isMessage(message, 'auth-failure')) return;
    for (const worker of liveWorkers())
      if (worker.id !== from.id)
        worker.send({ assay: 'auth-failure', address: message.address } satisfies FromPrimary);
  });
}

function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w?.isConnected());
}

/**
 * Forks `count` workers; `started` resolves with their address once all listen, and fails if one exits
 * before (its own output says why). After that a worker that exits is logged and replaced. `stop` sends every
 * worker SIGTERM (each drains its requests) and kills those still running past the deadline.
 */
function superviseWorkers(count: number, env: Record<string, string>, log: Logger) {
  let closing = false;
  let started = false;
  let listening = 0;
  let resolveStarted!: (address: string) => void;
  let failStart!: (err: Error) => void;
  const startedPromise = new Promise<string>((resolve, reject) => {
    resolveStarted = resolve;
    failStart = reject;
  });
  const fork = () => {
    const worker = cluster.fork(env);
    worker.on('message', (message) => {
      if (!isMessage(message, 'listening')) return;
      if (started) log.info({ worker: worker.id, pid: worker.process.pid }, 'HTTP worker listening');
      else if (++listening === count) {
        started = true;
        resolveStarted(message.address);
      }
    });
  };
  cluster.on('exit', (worker, code, signal) => {
    if (closing) return;
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (!started) {
      failStart(new Error(`HTTP worker ${worker.id} ${how} before it listened (its output above says why)`));
      return;
    }
    log.error(
      { worker: worker.id, pid: worker.process.pid, code, signal },
      `HTTP worker ${worker.id} ${how}; starting another`,
    );
    setTimeout(() => {
      if (!closing) fork();
    }, RESTART_DELAY_MS);
  });
  for (let i = 0; i < count; i++) fork();
  return {
    started: startedPromise,
    async stop(timeoutMs: number): Promise<void> {
      closing = true;
      const running = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
      const exited = running.map((w) => new Promise((resolve) => w.once('exit', resolve)));
      for (const w of running) w.process.kill('SIGTERM');
      const late = setTimeout(() => {
        for (const w of running) if (!w.isDead()) w.process.kill('SIGKILL');
      }, timeoutMs + 10_000);
      await Promise.all(exited);
      clearTimeout(late);
    },
  };
}
