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
    listen(channel, handlers) {
      // One in-process connection: it never drops, and it hears its own NOTIFYs, delivered as their
      // statement ends.
      const unlisten = db
        .listen(channel, (payload) => handlers.onNotify(payload))
        .then((stop) => {
          handlers.onListening();
          return stop;
        });
      unlisten.catch((err: unknown) => handlers.onLost(err instanceof Error ? err : new Error(String(err))));
      return {
        async close() {
          await (
            await unlisten.catch(() => undefined)
          )?.();
        },
      };
    },
    async close() {
      await db.close();
    },
  };
}
