import { createHash } from 'node:crypto';
import pg from 'pg';
import { storableParams, type Db, type NoticeHandlers, type Tx } from './db-handle.ts';

/** How the listening sessions show in `pg_stat_activity` (docs/production.md names it for operators). */
export const LISTENER_APPLICATION_NAME = 'assay-listener';

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
  /**
   * Where LISTEN sessions connect, when not to `connectionString`: LISTEN needs a session of its own, which a
   * pooler in transaction mode (PgBouncer's `pool_mode = transaction`) does not keep.
   */
  listenUrl?: string | undefined;
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
      // client then emits 'error', which must not go unheard (that crashes the process), and must not
      // be reused.
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
    listen(channel, handlers) {
      return listenSession(o.listenUrl ?? connectionString, channel, handlers);
    },
    async close() {
      await pool.end();
    },
  };
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

/**
 * One dedicated connection (outside the pool, which would hand it to other queries) that LISTENs and nothing
 * else. When it is lost (server restart, failover, pg_terminate_backend) it reconnects with backoff; notices
 * sent in the gap are gone, which is why the handlers hear `onLost` and `onListening`.
 */
function listenSession(url: string, channel: string, handlers: NoticeHandlers): { close(): Promise<void> } {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = RECONNECT_MIN_MS;

  const open = async () => {
    if (closed) return;
    const client = new pg.Client({
      connectionString: url,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    current = client;
    let gone = false;
    const lose = (error: Error) => {
      if (gone) return;
      gone = true;
      client.end().catch(() => {});
      if (closed) return;
      handlers.onLost(error);
      retry = setTimeout(() => void open(), delayMs);
      delayMs = Math.min(delayMs * 2, RECONNECT_MAX_MS);
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('the listening session ended')));
    client.on('notification', (notice) => {
      if (notice.channel === channel) handlers.onNotify(notice.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      lose(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (gone || closed) return;
    delayMs = RECONNECT_MIN_MS;
    handlers.onListening();
  };
  void open();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await current?.end().catch(() => {});
    },
  };
}
