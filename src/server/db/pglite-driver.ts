import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { storableParams, type Db } from './db-handle.ts';

/** PGlite in a data directory (or in memory for `memory://`); one connection, transactions serialised. */
export async function openPglite(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    driver: 'pglite',
    async query(sql, params) {
      return (await db.query(sql, storableParams(params))).rows as never[];
    },
    transaction(fn) {
      return db.transaction((tx) =>
        fn({
          inTransaction: true,
          query: async (sql, params) => (await tx.query(sql, storableParams(params))).rows as never[],
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      );
    },
    async close() {
      await db.close();
    },
  };
}
