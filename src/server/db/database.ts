// Picks the driver; each driver module is loaded only when chosen (pg and PGlite are large).
import type { Db, Queryable } from './db-handle.ts';

export type { Db, Queryable, Tx } from './db-handle.ts';

/** Opens the database named by the config: `DATABASE_URL` when set, PGlite in `dataDir` otherwise. */
export async function openDatabase(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  /**
   * PostgreSQL only: where LISTEN sessions connect, when not to `databaseUrl` (a pooler in transaction mode).
   */
  listenUrl?: string | undefined;
}): Promise<Db> {
  if (opts.databaseUrl) {
    const { openPostgres } = await import('./postgres-driver.ts');
    return openPostgres(opts.databaseUrl, opts);
  }
  const { openPglite } = await import('./pglite-driver.ts');
  return openPglite(opts.dataDir);
}

/** The cheapest statement that proves the database answers (readiness, and the watchdog's pause). */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
