import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from './app.ts';
import type { Orchestrator } from './orchestration/orchestrator.ts';
import { bootstrapAdminOnce } from './admin/user-accounts.ts';
import type { ServiceConfig } from './config.ts';
import { openDatabase, type Db } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { storeOrchestratorKey } from './orchestration/orchestrator-keys.ts';
import { startRunReconciler, type RunReconciler } from './orchestration/run-reconciler.ts';
import { startWatchdog, type Watchdog } from './runs/watchdog.ts';
import { createObjectStorage } from './storage/create-storage.ts';

export interface Service {
  app: FastifyInstance;
  db: Db;
  watchdog: Watchdog;
  /** Present with an orchestrator: starts workflows that provisioning committed but could not start. */
  reconciler: RunReconciler | undefined;
  /** The bootstrap admin key, only on the very first start against an empty database. */
  bootstrapKey: string | undefined;
  close(): Promise<void>;
}

/**
 * Everything a running service needs, without listening: open and migrate the database, bootstrap the
 * first admin, store the pre-shared orchestrator key, build the app, start the watchdog. `server.ts` listens;
 * tests use `app.inject` or listen too. The orchestrator, when given, stays the caller's to close.
 */
export async function createService(
  config: ServiceConfig,
  opts: { logger?: AppDeps['logger']; db?: Db; orchestrator?: Orchestrator } = {},
): Promise<Service> {
  const db =
    opts.db ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: `${config.dataDir}/pglite` }));
  try {
    await migrate(db);
    if (config.orchestratorKey) await storeOrchestratorKey(db, config.orchestratorKey);
  } catch (err) {
    if (!opts.db) await db.close();
    throw err;
  }
  const bootstrapKey = await bootstrapAdminOnce(db, config.apiKeyTtlDays);
  const storage = await createObjectStorage(config.storage);
  const app = await buildApp({ config, db, storage, logger: opts.logger, orchestrator: opts.orchestrator });
  // The watchdog's grace after a start (runs/watchdog.ts) must not be spent loading plugins and compiling schemas.
  await app.ready();
  const watchdog = startWatchdog(
    db,
    { timeoutMs: config.watchdogTimeoutMs, intervalMs: config.watchdogIntervalMs },
    app.log,
    opts.orchestrator,
  );
  const reconciler =
    opts.orchestrator &&
    startRunReconciler(
      db,
      opts.orchestrator,
      { intervalMs: config.reconcileIntervalMs, giveUpMs: config.reconcileGiveUpMs },
      app.log,
    );
  return {
    app,
    db,
    watchdog,
    reconciler,
    bootstrapKey,
    async close() {
      watchdog.stop();
      await reconciler?.stop();
      await app.close();
      await storage.close();
      await db.close();
    },
  };
}
