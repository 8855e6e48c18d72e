// The real service for a benchmark: `assay server` as its own process on a free port, over a fresh,
// uniquely named PostgreSQL database that is dropped afterwards.
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
  stop(): Promise<void>;
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Starts the service with `env` (orchestrator off, a temp data directory) and returns its URL and admin key.
 */
export async function startBenchService(
  bench: string,
  env: Record<string, string> = {},
): Promise<BenchService> {
  const database = `assay_bench_${bench}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), `assay-bench-${bench}-`));
  const drop = async () => {
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const server = await startAssayServer({
      DATABASE_URL: url.toString(),
      ASSAY_ORCHESTRATOR: 'off',
      ASSAY_DATA_DIR: dataDir,
      ...env,
    });
    if (!server.bootstrapKey) throw new Error('a fresh database must print a bootstrap admin key');
    return {
      url: server.url,
      key: server.bootstrapKey,
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
