// Assay scaled out as docker-compose.yml describes it, without Docker: two `assay server` replicas on one
// PostgreSQL and one Temporal, two `assay worker` processes, local compute; one replica and one worker are
// killed -9 in the middle of a sweep and restarted.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import pg from 'pg';
import { stringify } from 'yaml';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { checkAcknowledged, runWriter, type WriteLog } from '../support/acknowledged-writes.ts';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { LoadClient } from '../support/load-client.ts';
import { startTemporal } from '../support/orchestration.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { spawnProcessGroup, type ProcessGroup } from '../support/process-group.ts';
import { waitUntilReady } from '../support/readiness.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const RUNS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('scale-out: two replicas and two workers, one of each killed -9 during a sweep', () => {
  let env: TestWorkflowEnvironment;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let serverEnv: Record<string, string>;
  let replicas: [AssayServer, AssayServer];
  let workers: [ProcessGroup, ProcessGroup];
  let adminKey: string;
  const orchestratorKey = generateOrchestratorKey();
  const taskQueue = `assay-scale-out-${Date.now()}`;

  function startWorkerProcess(serviceUrl: string): ProcessGroup {
    const worker = spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'worker'], {
      name: 'assay worker',
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        TEMPORAL_ADDRESS: env.address,
        ASSAY_TASK_QUEUE: taskQueue,
        ASSAY_SERVICE_URL: serviceUrl,
        // Instances reach the service by the address that outlives one replica, as a load balancer's would
        // in production; the worker's own calls go to its replica, the one killed.
        ASSAY_RUNNER_SERVER_URL: replicas[1].url,
        ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
        // Both workers share the local provider's state, as workers sharing one machine would.
        ASSAY_DATA_DIR: dataDir,
        // The commands append to the test's log of runs, out of a sandbox's reach.
        ASSAY_LOCAL_SANDBOX: 'off',
      },
      stopGraceMs: 5_000,
    });
    return worker;
  }

  async function workerReady(worker: ProcessGroup) {
    await waitUntilReady(worker, async () => worker.output().includes('polling task queue'), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  }

  before(async () => {
    env = await startTemporal();
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-scale-out-'));
    serverEnv = {
      DATABASE_URL: database.url,
      ASSAY_DATA_DIR: path.join(dataDir, 'service'),
      TEMPORAL_ADDRESS: env.address,
      ASSAY_TASK_QUEUE: taskQueue,
      ASSAY_WORKER: 'off',
      ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
      ASSAY_LOG_LEVEL: 'warn',
      ASSAY_RUN_POLL_S: '1',
    };
    const first = await startAssayServer(serverEnv);
    adminKey = first.bootstrapKey!;
    assert.ok(adminKey, 'the first replica bootstraps the admin');
    replicas = [first, await startAssayServer(serverEnv)];
    workers = [startWorkerProcess(replicas[0].url), startWorkerProcess(replicas[1].url)];
    await Promise.all(workers.map(workerReady));
  });

  after(async () => {
    await Promise.all((workers ?? []).map((w) => w.stop().catch(() => undefined)));
    await Promise.all((replicas ?? []).map((r) => r.stop().catch(() => undefined)));
    await env?.teardown();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  async function call(base: string, method: string, url: string, body?: unknown, key = adminKey) {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** A sweep of RUNS managed runs; each run's command appends its address to a log once, then sleeps. */
  async function startSweep(base: string, runLog: string) {
    const experiment = await call(base, 'POST', '/experiments', {
      name: `scale-out-${path.basename(runLog)}`,
      organization_id: 'personal',
    });
    assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
    const created = await call(base, 'POST', `/experiments/${experiment.body.id}/sweeps`, {
      base_yaml: stringify({
        seed: 0,
        launch: {
          command:
            'echo "$SERVICE_EXPERIMENT_ID/$SERVICE_VARIATION/$SERVICE_RUN" >> "$RUN_LOG" && sleep 2 && mkdir -p outputs && echo done > outputs/done.txt',
          env: { RUN_LOG: runLog },
        },
      }),
      grid: { seed: Array.from({ length: RUNS }, (_, i) => i + 1) },
      concurrency: 8,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    return { experimentId: experiment.body.id as string, sweep: created.body };
  }

  /** Polls the sweep through whichever replica answers, until it is done; returns its last progress. */
  async function waitForSweep(experimentId: string, sweepId: string, timeoutMs = 240_000) {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (let i = 0; ; i++) {
      const base = replicas[i % 2]!.url;
      const answer = await call(base, 'GET', `/experiments/${experimentId}/sweeps/${sweepId}`).catch(
        () => undefined,
      );
      if (answer?.status === 200 && answer.body.progress?.done) return answer.body;
      if (answer?.status === 200) last = answer.body.progress;
      assert.ok(
        Date.now() < deadline,
        `sweep ${sweepId} done within ${timeoutMs} ms; last progress ${JSON.stringify(last)}; ` +
          `worker output:\n${workers.map((w) => w.output().slice(-3000)).join('\n---\n')}`,
      );
      await sleep(250);
    }
  }

  async function assertEveryRunSucceededOnce(experimentId: string, sweep: any, runLog: string) {
    assert.equal(sweep.runs.length, RUNS);
    const failed = [];
    for (const run of sweep.runs) {
      const path = `/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`;
      const detail = (await call(replicas[1].url, 'GET', path)).body;
      if (detail.state !== 'succeeded') failed.push(detail);
    }
    assert.deepEqual(failed, [], 'every run succeeded');
    const lines = (await readFile(runLog, 'utf8')).trim().split('\n');
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    for (const run of sweep.runs) {
      const key = `${experimentId}/${run.n}/${run.r}`;
      assert.equal(counts.get(key), 1, `the command of run ${key} ran exactly once`);
    }
    assert.equal(lines.length, RUNS, 'no command ran for anything but the sweep');
  }

  async function assertNoInstanceLeft(expected: number) {
    const stateDir = path.join(dataDir, 'instances');
    const provider = new LocalProvider({ stateDir, runnerArgv: ['true'], graceMs: 0 });
    const files = await readdir(stateDir).catch(() => [] as string[]);
    const state = files.includes('local-instances.json')
      ? (JSON.parse(await readFile(path.join(stateDir, 'local-instances.json'), 'utf8')) as object)
      : {};
    for (const key of Object.keys(state))
      assert.equal(await provider.describe(key), undefined, `instance ${key} is gone`);
    // Both workers wrote one state file: a record lost between them would let a retried provision
    // start twice.
    assert.equal(Object.keys(state).length, expected, 'one instance record per run, none lost');
  }

  test(`a sweep of ${RUNS} managed runs: every run succeeds once, no instance or acknowledged write is lost`, async (t) => {
    // The same sweep without faults first: the baseline of the wall time.
    const calmLog = path.join(dataDir, 'calm-runs.log');
    const calmStarted = Date.now();
    const calm = await startSweep(replicas[0].url, calmLog);
    const calmDone = await waitForSweep(calm.experimentId, calm.sweep.id);
    const calmMs = Date.now() - calmStarted;
    await assertEveryRunSucceededOnce(calm.experimentId, calm.sweep, calmLog);
    assert.equal(calmDone.progress.succeeded, RUNS, JSON.stringify(calmDone.progress));

    // Writers on both replicas record every write the service acknowledged.
    const log: WriteLog = { acks: [], networkErrors: [], refusals: [] };
    let stopped = false;
    const clients = replicas.map(
      (r) => new LoadClient(r.url, adminKey, { connections: 4, timeoutMs: 5_000 }),
    );
    const writers = clients.map((client, i) => runWriter(client, log, `writer-${i}`, () => stopped));
    // Whatever fails below, the writers stop: a writer left running keeps the test process alive.
    let writersStopped: Promise<unknown> | undefined;
    const stopWriters = () => {
      stopped = true;
      writersStopped ??= Promise.all(writers).then(() => Promise.all(clients.map((c) => c.agent.close())));
      return writersStopped;
    };
    t.after(stopWriters);

    const faultLog = path.join(dataDir, 'faulted-runs.log');
    const faultStarted = Date.now();
    const faulted = await startSweep(replicas[1].url, faultLog);
    // Kill replica A and worker 1 once runs are in flight: by the sweep workflow's own count (children
    // started), as the API's progress counted before it was taken from the runs' states.
    for (let i = 0; ; i++) {
      const progress = await env.client.workflow
        .getHandle(faulted.sweep.workflow_id)
        .query<{ running: number; succeeded: number }>('progress')
        .catch(() => undefined);
      if (progress && progress.running + progress.succeeded >= 4) break;
      assert.ok(i < 600, 'the faulted sweep got going');
      await sleep(100);
    }
    const port = new URL(replicas[0].url).port;
    process.kill(-replicas[0].process.pid, 'SIGKILL');
    process.kill(-workers[0].pid, 'SIGKILL');
    await Promise.all([replicas[0].process.exited, workers[0].exited]);
    await sleep(3_000);
    replicas[0] = await startAssayServer({ ...serverEnv, PORT: port });
    workers[0] = startWorkerProcess(replicas[0].url);
    await workerReady(workers[0]);

    const faultedDone = await waitForSweep(faulted.experimentId, faulted.sweep.id);
    const faultedMs = Date.now() - faultStarted;
    await stopWriters();

    await assertEveryRunSucceededOnce(faulted.experimentId, faulted.sweep, faultLog);
    assert.equal(faultedDone.progress.succeeded, RUNS, JSON.stringify(faultedDone.progress));
    await assertNoInstanceLeft(2 * RUNS);

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    t.after(() => db.end());
    const { checked, problems } = await checkAcknowledged(db, log.acks);
    assert.deepEqual(problems, [], 'every acknowledged write is in the database');
    assert.ok(checked.experiments > 0, 'the writers got writes acknowledged');
    t.diagnostic(
      `sweep of ${RUNS} × 2 s at concurrency 8: ${(calmMs / 1000).toFixed(1)} s without faults, ` +
        `${(faultedMs / 1000).toFixed(1)} s with a replica and a worker killed -9 (${(faultedMs / calmMs).toFixed(2)}×)`,
    );
    t.diagnostic(
      `acknowledged writes checked: ${JSON.stringify(checked)}; requests without an answer during the outage: ${log.networkErrors.length}`,
    );
  });

  test('a key revoked on replica A answers 401 on replica B within 5 s', async (t) => {
    const minted = await call(replicas[0].url, 'POST', '/api-keys', {
      description: 'revoked across replicas',
      scopes: ['experiments:read'],
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    // Used on B first, so B holds it in its auth cache.
    assert.equal(
      (await call(replicas[1].url, 'GET', '/experiments', undefined, minted.body.key)).status,
      200,
    );
    assert.equal((await call(replicas[0].url, 'DELETE', `/api-keys/${minted.body.id}`)).status < 300, true);
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 10_000) {
      status = (await call(replicas[1].url, 'GET', '/experiments', undefined, minted.body.key)).status;
      if (status !== 401) await sleep(50);
    }
    const ms = Date.now() - revokedAt;
    assert.equal(status, 401);
    assert.ok(ms <= 5_000, `revocation seen on the other replica after ${ms} ms`);
    t.diagnostic(`revocation on replica A seen on replica B after ${ms} ms`);
  });
});
