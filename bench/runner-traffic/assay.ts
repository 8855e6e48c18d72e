// Our service as a real process on PostgreSQL, and the runner lifecycle against it over HTTP.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bootstrapKeyPath } from '../../src/server/admin/bootstrap-key-file.ts';
import { freePort } from '../../test/support/free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from '../../test/support/process-group.ts';
import { waitUntilReady } from '../../test/support/readiness.ts';
import { JsonHttp, mapLimit } from './http.ts';
import type { RunnerTarget } from './load.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface AssayServer {
  url: string;
  process: ProcessGroup;
  key: string;
}

/**
 * `node bin/assay.js server` on a fresh database, no orchestrator, logging warnings only. `nodeFlags` (e.g.
 * --cpu-prof) go to node, `extraEnv` adds service settings (e.g. ASSAY_AUTH_CACHE_S) for experiments,
 * `serverRoot` runs the server of another checkout (e.g. the base commit's, for a before/after).
 */
export async function startAssay(
  databaseUrl: string,
  nodeFlags: string[] = [],
  extraEnv: Record<string, string> = {},
  serverRoot = repoRoot,
): Promise<AssayServer> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-bench-'));
  const child = spawnProcessGroup(
    process.execPath,
    [...nodeFlags, path.join(serverRoot, 'bin/assay.js'), 'server'],
    {
      name: 'assay server',
      cwd: serverRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        ASSAY_DATA_DIR: dataDir,
        ASSAY_LOG_LEVEL: 'warn',
        ASSAY_ORCHESTRATOR: 'off',
        ...extraEnv,
      },
      cleanupPaths: [dataDir],
      stopGraceMs: 10_000,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, async () => (await fetch(`${url}/readyz`)).ok, {
    timeoutMs: 90_000,
    intervalMs: 200,
  });
  // The service writes the bootstrap admin key to a mode-600 file in its data directory, not to its output.
  const key = await readFile(bootstrapKeyPath(dataDir), 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  if (!key) {
    await child.stop();
    throw new Error(`assay server wrote no bootstrap admin key; its output:\n${child.output()}`);
  }
  return { url, process: child, key };
}

export interface AssayTarget extends RunnerTarget<number> {
  experimentId: string;
  userId: string;
  /** Runs of the pgbench variation, created and started (running) so the heartbeat's UPDATE finds them. */
  prepareForPgbench(count: number): Promise<number[]>;
  close(): Promise<void>;
}

/** The variation whose runs the heartbeat and lifecycle phases use, and one whose runs pgbench heartbeats. */
export const LOAD_VARIATION = 1;
export const PGBENCH_VARIATION = 2;

/**
 * A committed experiment with two variations, and the runner lifecycle of README's walkthrough: create a run,
 * GET …/config, POST start (with an environment), POST heartbeat, POST succeed.
 */
export async function assayTarget(server: AssayServer, connections: number): Promise<AssayTarget> {
  const http = new JsonHttp(server.url, connections, { authorization: `Bearer ${server.key}` });
  const me = await http.call<{ id: string }>('GET', '/v1/me');
  const experiment = await http.call<{ id: string }>('POST', '/experiments', {
    name: 'runner-traffic',
    hypothesis: 'heartbeats scale',
  });
  for (let v = 0; v < 2; v++)
    await http.call('POST', `/experiments/${experiment.id}/variations`, {
      config_yaml: `lr: 3.0e-4\nseed: ${v}\n`,
    });
  await http.call('POST', `/experiments/${experiment.id}/commit`);
  const runs = (n: number) => `/experiments/${experiment.id}/variations/${n}/runs`;
  const run = (r: number, n = LOAD_VARIATION) => `${runs(n)}/${r}`;
  const create = async (n = LOAD_VARIATION) => (await http.call<{ r: number }>('POST', runs(n))).r;
  const begin = async (r: number, n = LOAD_VARIATION) => {
    await http.call('GET', `${run(r, n)}/config`);
    await http.call('POST', `${run(r, n)}/start`, { environment: { os: 'linux', python: '3.11' } });
  };
  const heartbeat = async (r: number) => {
    const answer = await http.call<{ state: string; cancel_requested: boolean }>(
      'POST',
      `${run(r)}/heartbeat`,
    );
    if (answer.state !== 'running' || answer.cancel_requested)
      throw new Error(`heartbeat answered ${JSON.stringify(answer)}`);
  };
  const finish = async (r: number) => void (await http.call('POST', `${run(r)}/succeed`));
  return {
    name: 'Assay',
    experimentId: experiment.id,
    userId: me.id,
    prepareRuns: (count) => mapLimit(Array.from({ length: count }), 32, () => create()),
    begin,
    heartbeat,
    finish,
    async lifecycle() {
      const r = await create();
      await begin(r);
      await heartbeat(r);
      await finish(r);
    },
    async prepareForPgbench(count: number): Promise<number[]> {
      return mapLimit(Array.from({ length: count }), 32, async () => {
        const r = await create(PGBENCH_VARIATION);
        await begin(r, PGBENCH_VARIATION);
        return r;
      });
    },
    close: () => http.close(),
  };
}
