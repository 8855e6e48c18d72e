// The MLflow tracking server (from .venv/bench) on its own PostgreSQL
// database, and its nearest runner lifecycle.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/support/free-port.ts';
import { spawnProcessGroup, type ProcessGroup } from '../../test/support/process-group.ts';
import { waitUntilReady } from '../../test/support/readiness.ts';
import { JsonHttp, mapLimit } from './http.ts';
import type { RunnerTarget } from './load.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
export const MLFLOW_BIN = path.join(repoRoot, '.venv/bench/bin/mlflow');
/** `mlflow server`'s default and documented worker count (uvicorn processes), kept as shipped. */
export const MLFLOW_WORKERS = 4;

/**
 * Installs MLflow into .venv/bench the first time (scripts/setup-bench-tools.sh: a few minutes, then a
 * no-op); answers why it could not, or undefined when MLflow is there.
 */
let ensured: { missing: string | undefined } | undefined;
export function ensureMlflow(): string | undefined {
  ensured ??= { missing: installMlflow() };
  return ensured.missing;
}

function installMlflow(): string | undefined {
  const setup = spawnSync('bash', [path.join(repoRoot, 'scripts/setup-bench-tools.sh')], {
    stdio: 'inherit',
    timeout: 20 * 60_000,
  });
  if (setup.status === 0 && existsSync(MLFLOW_BIN)) return undefined;
  return `scripts/setup-bench-tools.sh failed (${setup.error?.message ?? `exit ${setup.status}`})`;
}

/** The pinned MLflow version, as requirements-bench-tools.txt says. */
export async function mlflowVersion(): Promise<string> {
  const pins = await readFile(path.join(repoRoot, 'requirements-bench-tools.txt'), 'utf8');
  return /^mlflow==(\S+)/m.exec(pins)?.[1] ?? 'unknown';
}

export interface MlflowServer {
  url: string;
  process: ProcessGroup;
}

/**
 * `mlflow server` with its default uvicorn workers on `databaseUrl`, artifacts in a temp dir and not proxied.
 * The access log is off, as ours logs warnings only; startup runs MLflow's migrations on the empty database.
 */
export async function startMlflow(databaseUrl: string): Promise<MlflowServer> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), 'mlflow-bench-'));
  const args = [
    'server',
    '--backend-store-uri',
    databaseUrl.replace(/^postgres:/, 'postgresql+psycopg2:'),
    '--default-artifact-root',
    `file://${dir}/artifacts`,
    '--no-serve-artifacts',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--workers',
    String(MLFLOW_WORKERS),
    '--uvicorn-opts',
    '--no-access-log',
  ];
  const child = spawnProcessGroup(MLFLOW_BIN, args, {
    name: 'mlflow server',
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MLFLOW_DISABLE_TELEMETRY: 'true',
      DO_NOT_TRACK: 'true',
    },
    cleanupPaths: [dir],
    stopGraceMs: 10_000,
  });
  const url = `http://127.0.0.1:${port}`;
  // Its migrations on an empty database took over 3 minutes on a busy 2-core machine.
  await waitUntilReady(child, async () => (await fetch(`${url}/health`)).ok, {
    timeoutMs: 420_000,
    intervalMs: 500,
  });
  return { url, process: child };
}

const api = '/api/2.0/mlflow';

/**
 * MLflow's nearest runner lifecycle: runs/create (a created run is already RUNNING), runs/log-metric as the
 * heartbeat, runs/update to FINISHED as the success. There is no config to read and no start move.
 */
export async function mlflowTarget(
  server: MlflowServer,
  connections: number,
): Promise<RunnerTarget<string> & { close(): Promise<void> }> {
  const http = new JsonHttp(server.url, connections);
  const name = `runner-traffic-${process.pid}-${Date.now()}`;
  // A retried create (its answer lost to a closed connection) finds the experiment made the first time.
  const experiment_id = await http
    .setupCall<{ experiment_id: string }>('POST', `${api}/experiments/create`, { name })
    .then(
      (created) => created.experiment_id,
      async (error: unknown) => {
        if (!String(error).includes('RESOURCE_ALREADY_EXISTS')) throw error;
        const found = await http.setupCall<{ experiment: { experiment_id: string } }>(
          'GET',
          `${api}/experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
        );
        return found.experiment.experiment_id;
      },
    );
  let step = 0;
  const create = async (setup = false) =>
    (
      await http[setup ? 'setupCall' : 'call']<{ run: { info: { run_id: string } } }>(
        'POST',
        `${api}/runs/create`,
        { experiment_id, start_time: Date.now(), run_name: 'runner' },
      )
    ).run.info.run_id;
  const heartbeat = async (runId: string) => {
    step++;
    await http.call('POST', `${api}/runs/log-metric`, {
      run_id: runId,
      key: 'heartbeat',
      value: step,
      timestamp: Date.now(),
      step,
    });
  };
  const finish = async (runId: string, setup = false) =>
    void (await http[setup ? 'setupCall' : 'call']('POST', `${api}/runs/update`, {
      run_id: runId,
      status: 'FINISHED',
      end_time: Date.now(),
    }));
  return {
    name: 'MLflow',
    prepareRuns: (count) => mapLimit(Array.from({ length: count }), 32, () => create(true)),
    begin: async () => {},
    heartbeat,
    finish: (runId) => finish(runId, true),
    async lifecycle() {
      const runId = await create();
      await heartbeat(runId);
      await finish(runId);
    },
    close: () => http.close(),
  };
}
