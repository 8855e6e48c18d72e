import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from './app.ts';
import type { Orchestrator } from '../orchestrator/orchestrator.ts';
import { writeBootstrapKeyFile } from './admin/bootstrap-key-file.ts';
import { bootstrapAdminOnce } from './admin/user-accounts.ts';
import type { ServiceConfig } from './config.ts';
import { makePrivateDir, repairDataDirModes } from './data-dir.ts';
import { openDatabase, type Db } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { closeHttp } from './http/close-http.ts';
import { ensureInstallationId } from './orchestration/deployment-repository.ts';
import { revokeOtherOrchestratorKeys, storeOrchestratorKey } from './orchestration/orchestrator-keys.ts';
import { orchestratorRunEvents } from './orchestration/orchestrator-run-events.ts';
import { startRunReconciler, type RunReconciler } from './orchestration/run-reconciler.ts';
import { startWatchdog, type Watchdog } from './runs/watchdog.ts';
import { createObjectStorage } from './storage/create-storage.ts';
import { StorageUnavailable } from './storage/object-storage.ts';
import { ConfigError } from '../settings/config-error.ts';

export interface Service {
  app: FastifyInstance;
  db: Db;
  watchdog: Watchdog;
  /** Present with an orchestrator: starts workflows that provisioning committed but could not start. */
  reconciler: RunReconciler | undefined;
  /**
   * The bootstrap admin key, only on the very first start against an empty database; it is also in the
   * mode-600 file `bootstrapKeyPath(config.dataDir)`, written before the admin committed.
   */
  bootstrapKey: string | undefined;
  /**
   * The first half of a shutdown: HTTP stops taking requests and lets those in flight finish (closing their
   * connections past `timeoutMs`), then the watchdog stops after any pass in progress. Resolves false when
   * requests were cut off. The database stays open for whatever the caller closes next (the orchestrator).
   */
  drain(timeoutMs: number): Promise<boolean>;
  /** Drains (if not done yet, with a 10 s deadline), then closes storage and the database. */
  close(): Promise<void>;
}

/**
 * Everything a running service needs, without listening: open and migrate the database, bootstrap the first
 * admin, store the pre-shared orchestrator key (revoking every other), build the app, start the watchdog.
 * `server.ts` listens; tests use `app.inject` or listen too. The orchestrator, when given, stays the caller's
 * to close.
 */
export async function createService(
  config: ServiceConfig,
  opts: { logger?: AppDeps['logger']; db?: Db; orchestrator?: Orchestrator } = {},
): Promise<Service> {
  await makePrivateDir(config.dataDir);
  const db = opts.db ?? (await openServiceDatabase(config));
  let bootstrapKey: string | undefined;
  try {
    bootstrapKey = await settleDatabase(db, config, opts.orchestrator);
  } catch (err) {
    if (!opts.db) await db.close();
    throw err;
  }
  const http = await createHttp(config, db, { ...opts, closeDbOnFailure: !opts.db });
  await repairDataDirModes(config, http.app.log);
  const background = startBackgroundWork(db, config, opts.orchestrator, http.app.log);
  let draining: Promise<boolean> | undefined;
  const drain = (timeoutMs: number) =>
    (draining ??= http.drain(timeoutMs).then(async (inTime) => {
      await background.stop();
      return inTime;
    }));
  return {
    app: http.app,
    db,
    watchdog: background.watchdog,
    reconciler: background.reconciler,
    bootstrapKey,
    drain,
    async close() {
      await drain(10_000);
      await http.close();
    },
  };
}

/** One HTTP worker of `assay server --workers N`: the app alone, the once-per-start work left to the primary. */
export interface HttpService {
  app: FastifyInstance;
  db: Db;
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The app of one HTTP worker (server-cluster.ts): on a database the primary process migrated and settled, so
 * it stores no key, revokes none and bootstraps no admin (a worker restarted after a crash must not revoke the
 * embedded worker's key), and runs neither the watchdog nor the reconciler (the primary's).
 */
export async function createHttpService(
  config: ServiceConfig,
  opts: { logger?: AppDeps['logger']; orchestrator?: Orchestrator } = {},
): Promise<HttpService> {
  const db = await openServiceDatabase(config);
  try {
    if (opts.orchestrator) opts.orchestrator.useDeployment(await ensureInstallationId(db));
  } catch (err) {
    await db.close();
    throw err;
  }
  return { db, ...(await createHttp(config, db, { ...opts, closeDbOnFailure: true })) };
}

/** The service's database (PostgreSQL at DATABASE_URL, else the embedded PGlite in the data directory). */
export async function openServiceDatabase(config: ServiceConfig): Promise<Db> {
  await makePrivateDir(config.dataDir);
  return openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: `${config.dataDir}/pglite`,
    statementTimeoutMs: config.pgStatementTimeoutMs,
    idleInTransactionTimeoutMs: config.pgIdleInTransactionTimeoutMs,
    listenUrl: config.databaseListenUrl,
  });
}

/**
 * What one start does once to its database, before any request: migrate, name the deployment (the task
 * queue carries its installation id), store the pre-shared orchestrator key and revoke every other, bootstrap
 * the first admin. Answers the bootstrap key on the very first start (also written to its mode-600 file).
 */
export async function settleDatabase(
  db: Db,
  config: ServiceConfig,
  orchestrator: Orchestrator | undefined,
): Promise<string | undefined> {
  await migrate(db);
  // Before anything can start a workflow: the deployment's task queue carries its installation id.
  orchestrator?.useDeployment(await ensureInstallationId(db));
  if (config.orchestratorKey) await storeOrchestratorKey(db, config.orchestratorKey);
  await revokeOtherOrchestratorKeys(db, config.orchestratorKey);
  return bootstrapAdminOnce(db, config.apiKeyTtlDays, async (key) => {
    await writeBootstrapKeyFile(config.dataDir, key);
  });
}

/** The watchdog and, with an orchestrator, the reconciler: one of each per start, beside the HTTP side. */
export function startBackgroundWork(
  db: Db,
  config: ServiceConfig,
  orchestrator: Orchestrator | undefined,
  log: FastifyBaseLogger,
): { watchdog: Watchdog; reconciler: RunReconciler | undefined; stop(): Promise<void> } {
  const watchdog = startWatchdog(
    db,
    { timeoutMs: config.watchdogTimeoutMs, intervalMs: config.watchdogIntervalMs },
    log,
    orchestratorRunEvents(orchestrator),
  );
  const reconciler =
    orchestrator &&
    startRunReconciler(
      db,
      orchestrator,
      { intervalMs: config.reconcileIntervalMs, giveUpMs: config.reconcileGiveUpMs },
      log,
    );
  return {
    watchdog,
    reconciler,
    async stop() {
      await watchdog.stop();
      await reconciler?.stop();
    },
  };
}

/** Storage opened and checked, the app built and ready; `close` closes storage, then the database. */
async function createHttp(
  config: ServiceConfig,
  db: Db,
  opts: { logger?: AppDeps['logger']; orchestrator?: Orchestrator; closeDbOnFailure: boolean },
): Promise<{ app: FastifyInstance; drain(timeoutMs: number): Promise<boolean>; close(): Promise<void> }> {
  // Told once, at the first upload, whether the store verifies checksums (the app's logger exists by then).
  const probeLog: { log?: { info(o: object, m: string): void; warn(o: object, m: string): void } } = {};
  const storage = await createObjectStorage(config.storage, {
    onChecksumProbe: (verifies, detail) =>
      probeLog.log?.[verifies ? 'info' : 'warn'](
        { verifies },
        verifies
          ? `object store verifies sha256 on upload (${detail}): finalize trusts its checksums`
          : `object store does not verify sha256 on upload (${detail}): finalize reads every byte`,
      ),
  });
  try {
    await storage.check({ timeoutMs: 10_000 });
  } catch (err) {
    await storage.close();
    if (opts.closeDbOnFailure) await db.close();
    if (!(err instanceof StorageUnavailable)) throw err;
    // Fail fast at start, naming the setting, rather than at the first upload.
    const cause = err.cause instanceof Error ? `: ${err.cause.message || err.cause.name}` : '';
    throw new ConfigError(`${err.message}${cause}`);
  }
  // The one place the runs feature is told of the orchestration side: through the RunEvents port.
  const app = await buildApp({
    config,
    db,
    storage,
    logger: opts.logger,
    orchestrator: opts.orchestrator,
    runEvents: orchestratorRunEvents(opts.orchestrator),
  });
  probeLog.log = app.log;
  // The watchdog's grace after a start (runs/watchdog.ts) must not be spent loading plugins and
  // compiling schemas.
  await app.ready();
  let draining: Promise<boolean> | undefined;
  const drain = (timeoutMs: number) => (draining ??= closeHttp(app, timeoutMs));
  return {
    app,
    drain,
    async close() {
      await drain(10_000);
      await storage.close();
      await db.close();
    },
  };
}
