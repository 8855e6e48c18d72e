import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './database.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/**
 * Applies the ordered SQL files of `migrations/` that are not yet recorded, each in its own transaction.
 * An advisory lock makes concurrent starts of several replicas apply each file exactly once.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
    const done = await db.transaction(async (tx) => {
      // A migration may rewrite a big table, and a replica waits here for another's: no statement limit.
      await tx.query('SET LOCAL statement_timeout = 0');
      await tx.query('SELECT pg_advisory_xact_lock(7260411)');
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [file]);
      if (seen.length > 0) return false;
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}

/** Our migrations keep one statement per `;`-terminated paragraph and no `;` inside bodies. */
function splitStatements(sql: string): string[] {
  return sql
    .replace(/^--.*$/gm, '')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter(Boolean);
}
