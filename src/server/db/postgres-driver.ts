import pg from 'pg';
import { storableParams, type Db, type Tx } from './database.ts';

/** A pooled node-postgres connection; errors on idle clients are logged by the pool owner, never thrown. */
export function openPostgres(connectionString: string, poolSize = 20): Db {
  const pool = new pg.Pool({ connectionString, max: poolSize, connectionTimeoutMillis: 5000 });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return {
    driver: 'postgres',
    async query(sql, params) {
      const result = await pool.query(sql, storableParams(params));
      return result.rows;
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Tx = {
          inTransaction: true,
          query: async (sql, params) => (await client.query(sql, storableParams(params))).rows,
        };
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
