import { createHash } from 'node:crypto';
import pg from 'pg';
import { storableParams, type Db, type Tx } from './db-handle.ts';

const names = new Map<string, string>();

/**
 * A named statement: each pooled connection parses and plans it once, then reuses the plan. Unnamed ones are
 * planned on every call, which bench/runner-traffic.ts measured as most of a heartbeat's database time
 * (0.47 ms planning vs 0.26 ms executing). Our parameterized SQL texts are a fixed set, so the names are too.
 */
function prepared(sql: string, params: readonly unknown[] | undefined): pg.QueryConfig {
  // Without parameters a text may hold several statements, which a prepared statement cannot.
  if (!params || params.length === 0) return { text: sql };
  let name = names.get(sql);
  if (!name) {
    name = `q${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    if (names.size < 10_000) names.set(sql, name);
  }
  return { name, text: sql, values: storableParams(params) };
}

export interface PostgresOptions {
  /** The server cancels a statement running longer (SQLSTATE 57014); 0 turns the limit off. */
  statementTimeoutMs: number;
  /** The server ends a session idle this long inside a transaction, releasing its locks; 0 turns it off. */
  idleInTransactionTimeoutMs: number;
  poolSize?: number;
}

/** A pooled node-postgres connection; errors on idle clients are logged by the pool owner, never thrown. */
export function openPostgres(connectionString: string, o: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: o.poolSize ?? 20,
    connectionTimeoutMillis: 5000,
    // Sent as startup parameters, so every pooled connection carries them from its first statement.
    statement_timeout: o.statementTimeoutMs,
    idle_in_transaction_session_timeout: o.idleInTransactionTimeoutMs,
    // TCP keepalives notice a peer that vanished (failover, a dropped NAT entry) instead of waiting forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return {
    driver: 'postgres',
    async query(sql, params) {
      const result = await pool.query(prepared(sql, params));
      return result.rows;
    },
    async transaction(fn) {
      const client = await pool.connect();
      // The server may end a session mid-transaction (idle_in_transaction_session_timeout, a restart); the
      // client then emits 'error', which must not go unheard (that crashes the process), and must not be reused.
      let broken: Error | undefined;
      const onError = (error: Error) => {
        broken = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const tx: Tx = {
          inTransaction: true,
          query: async (sql, params) => (await client.query(prepared(sql, params))).rows,
          // Without parameters node-postgres uses the simple query protocol, which runs several statements.
          exec: async (sql) => {
            await client.query(sql);
          },
        };
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async close() {
      await pool.end();
    },
  };
}
