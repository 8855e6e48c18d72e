/**
 * One Postgres dialect, two drivers: node-postgres against a real server, or PGlite (Postgres compiled to
 * WebAssembly, in-process) for the embedded default. Repositories see only this interface.
 */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/** A handle inside a transaction; functions that lock rows take this type, not `Db`. */
export interface Tx extends Queryable {
  readonly inTransaction: true;
}

export interface Db extends Queryable {
  readonly driver: 'postgres' | 'pglite';
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs a multi-statement SQL script (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens the database named by the config: `DATABASE_URL` when set, PGlite in `dataDir` otherwise. */
export async function openDatabase(opts: { databaseUrl?: string; dataDir: string }): Promise<Db> {
  if (opts.databaseUrl) {
    const { openPostgres } = await import('./postgres-driver.ts');
    return openPostgres(opts.databaseUrl);
  }
  const { openPglite } = await import('./pglite-driver.ts');
  return openPglite(opts.dataDir);
}
