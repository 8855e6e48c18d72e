import { readdir, readFile } from 'node:fs/promises';
import type { Db, Tx } from './database.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_LOCK = 7260411;

/**
 * Applies the ordered SQL files of `migrations/` that are not yet recorded, each whole in its own
 * transaction. Every step, creating the bookkeeping table included, runs under one advisory lock, so replicas
 * starting together on an empty database apply each file exactly once instead of colliding.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  await db.transaction(async (tx) => {
    await lockMigrations(tx);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
  });
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
    const done = await db.transaction(async (tx) => {
      // A migration may rewrite a big table, and a replica waits here for another's: no statement limit.
      await tx.query('SET LOCAL statement_timeout = 0');
      await lockMigrations(tx);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [file]);
      if (seen.length > 0) return false;
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}

/** Held until the transaction ends; concurrent migrators wait here. */
async function lockMigrations(tx: Tx): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
}
