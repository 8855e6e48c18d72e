// Databases of the benchmark: each target gets a fresh one of its own
// on the shared server, dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_HOST = '127.0.0.1';
export const PG_PORT = 5432;
const adminUrl = `postgres://postgres@${PG_HOST}:${PG_PORT}/postgres`;

export const databaseUrl = (name: string) => `postgres://postgres@${PG_HOST}:${PG_PORT}/${name}`;

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a database named after this process and `label`, unique on the shared server. */
export async function createDatabase(label: string): Promise<string> {
  const name = `bench_rt_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  return name;
}

/** Drops a database of ours, closing what still holds it (a killed server's connections may linger). */
export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * Connections still free on the server for us: max_connections less the reserved ones, the ones in use and a
 * margin for others.
 */
export async function freeConnections(margin = 10): Promise<{ max: number; used: number; free: number }> {
  return withAdmin(async (c) => {
    const { rows } = await c.query<{ max: number; reserved: number; used: number }>(
      `SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved,
              (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS used`,
    );
    const { max, reserved, used } = rows[0]!;
    return { max, used, free: Math.max(0, max - reserved - used - margin) };
  });
}

/** The server's version and the settings that bound write throughput, for the report. */
export async function serverFacts(): Promise<string> {
  return withAdmin(async (c) => {
    const { rows } = await c.query<{ v: string; sc: string; sb: string; mc: string }>(
      `SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc,
              current_setting('shared_buffers') AS sb, current_setting('max_connections') AS mc`,
    );
    const f = rows[0]!;
    return `PostgreSQL ${f.v} (synchronous_commit=${f.sc}, shared_buffers=${f.sb}, max_connections=${f.mc})`;
  });
}
