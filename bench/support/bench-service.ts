// The real service for a benchmark: `assay server` as its own process on a free port, over a fresh,
// uniquely named PostgreSQL database that is dropped afterwards, or over a named one that is kept (a corpus
// that takes minutes to build, reused by later runs).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startAssayServer } from '../../test/support/assay-server.ts';
import { ADMIN_URL } from '../../test/support/postgres.ts';

export interface BenchService {
  url: string;
  key: string;
  databaseUrl: string;
  /** ASSAY_DATA_DIR: the local provider's instance records are under it. */
  dataDir: string;
  pid: number;
  /** True when a kept database already existed (a reused corpus): it printed no bootstrap key. */
  reused: boolean;
  stop(): Promise<void>;
}

async function admin(sql: string, params: unknown[] = []): Promise<number> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/** Drops a database `startBenchService` kept (`kept`), e.g. one whose build did not finish. */
export async function dropKeptDatabase(database: string): Promise<void> {
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}

/**
 * Starts the service with `env` (orchestrator off, a temp data directory) and returns its URL and admin key
 * (none when `kept` names a database that exists already: `reused`; the caller keeps its own key there).
 */
export async function startBenchService(
  bench: string,
  env: Record<string, string> = {},
  kept?: string,
): Promise<BenchService> {
  const database = kept ?? `assay_bench_${bench}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const reused =
    kept !== undefined && (await admin('SELECT 1 FROM pg_database WHERE datname = $1', [kept])) === 1;
  if (!reused) await admin(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), `assay-bench-${bench}-`));
  const drop = async () => {
    if (kept === undefined) await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const server = await startAssayServer({
      DATABASE_URL: url.toString(),
      ASSAY_ORCHESTRATOR: 'off',
      ASSAY_DATA_DIR: dataDir,
      ...env,
    });
    if (!server.bootstrapKey && !reused) throw new Error('a fresh database must print a bootstrap admin key');
    return {
      url: server.url,
      key: server.bootstrapKey ?? '',
      reused,
      databaseUrl: url.toString(),
      dataDir,
      pid: server.process.pid,
      async stop() {
        await server.stop();
        await drop();
      },
    };
  } catch (error) {
    await drop();
    throw error;
  }
}
