import type { FastifyInstance } from 'fastify';
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
  const db =
    opts.db ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: `${config.dataDir}/pglite`,
      statementTimeoutMs: config.pgStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.pgIdleInTransactionTimeoutMs,
      listenUrl: config.databaseListenUrl,
    }));
  let bootstrapKey: string | undefined;
  try {
    await migrate(db);
    // Before anything can start a workflow: the deployment's task queue carries its installation id.
    opts.orchestrator?.useDeployment(await ensureInstallationId(db));
    if (config.orchestratorKey) await storeOrchestratorKey(db, config.orchestratorKey);
    await revokeOtherOrchestratorKeys(db, config.orchestratorKey);
    bootstrapKey = await bootstrapAdminOnce(db, config.apiKeyTtlDays, async (key) => {
      await writeBootstrapKeyFile(config.dataDir, key);
    });
  } catch (err) {
    if (!opts.db) await db.close();
    throw err;
  }
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
    if (!opts.db) await db.close();
    if (!(err instanceof StorageUnavailable)) throw err;
    // Fail fast at start, naming the setting, rather than at the first upload.
    const cause = err.cause instanceof Error ? `: ${err.cause.message || err.cause.name}` : '';
    throw new ConfigError(`${err.message}${cause}`);
  }
  // The one place the runs feature is told of the orchestration side: through the RunEvents port.
  const runEvents = orchestratorRunEvents(opts.orchestrator);
  const app = await buildApp({
    config,
    db,
    storage,
    logger: opts.logger,
    orchestrator: opts.orchestrator,
    runEvents,
  });
  probeLog.log = app.log;
  await repairDataDirModes(config, app.log);
  // The watchdog's grace after a start (runs/watchdog.ts) must not be spent loading plugins and
  // compiling schemas.
  await app.ready();
  const watchdog = startWatchdog(
    db,
    { timeoutMs: config.watchdogTimeoutMs, intervalMs: config.watchdogIntervalMs },
    app.log,
    runEvents,
  );
  const reconciler =
    opts.orchestrator &&
    startRunReconciler(
      db,
      opts.orchestrator,
      { intervalMs: config.reconcileIntervalMs, giveUpMs: config.reconcileGiveUpMs },
      app.log,
    );
  let draining: Promise<boolean> | undefined;
  const drain = (timeoutMs: number) =>
    (draining ??= closeHttp(app, timeoutMs).then(async (inTime) => {
      await watchdog.stop();
      await reconciler?.stop();
      return inTime;
    }));
  return {
    app,
    db,
    watchdog,
    reconciler,
    bootstrapKey,
    drain,
    async close() {
      await drain(10_000);
      await storage.close();
      await db.close();
    },
  };
}
