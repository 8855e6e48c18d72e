import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Db } from './database.ts';

/** PGlite in a data directory (or in memory for `memory://`); one connection, transactions serialised. */
export async function openPglite(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    driver: 'pglite',
    async query(sql, params) {
      return (await db.query(sql, params as unknown[] | undefined)).rows as never[];
    },
    async exec(sql) {
      await db.exec(sql);
    },
    transaction(fn) {
      return db.transaction((tx) =>
        fn({ inTransaction: true, query: async (sql, params) => (await tx.query(sql, params as unknown[] | undefined)).rows as never[] }),
      );
    },
    async close() {
      await db.close();
    },
  };
}
