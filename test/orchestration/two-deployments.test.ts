// Two deployments on one machine, each as `npm start` runs it (embedded Temporal on the same default port,
// its own data dir): neither takes the other's work.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { repoRoot, takeBootstrapKey } from '../support/assay-server.ts';
import { freePorts } from '../support/free-port.ts';
import { httpApi } from '../support/http-api.ts';
import { startLoggedAssayServer, type LoggedAssayServer } from '../support/logged-assay-server.ts';
import { startTemporal } from '../support/orchestration.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { spawnProcessGroup, type ProcessGroup } from '../support/process-group.ts';

const RUNS = 5;

interface Deployment {
  name: string;
  server: LoggedAssayServer;
  key: string;
  /** The file every run's command appends its run number to. */
  lines: string;
}

describe('two deployments on one machine', () => {
  const dirs: string[] = [];
  const deployments: Deployment[] = [];
  let temporalPort: number;

  before(async () => {
    // Stands for the defaults 7233/8233, which both services are given, as two `npm start`s would be.
    const [port, uiPort] = await freePorts(2);
    temporalPort = port!;
    for (const name of ['first', 'second']) {
      const dir = await mkdtemp(path.join(tmpdir(), `assay-two-${name}-`));
      dirs.push(dir);
      // The commands append to a file of the test's, out of a sandbox's reach: they run unsandboxed, as the
      // admin's runs they are.
      const env = {
        ASSAY_DATA_DIR: path.join(dir, 'data'),
        ASSAY_LOCAL_SANDBOX: 'off',
        ASSAY_TEMPORAL_PORT: String(port),
        ASSAY_TEMPORAL_UI_PORT: String(uiPort),
      };
      const server = await startLoggedAssayServer(env, dir);
      const key = await takeBootstrapKey(env);
      assert.ok(key, `${name}: a bootstrap admin key`);
      deployments.push({ name, server, key, lines: path.join(dir, 'ran.txt') });
    }
  });

  after(async () => {
    for (const d of deployments) await d.server.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('the second does not join the first one’s Temporal: it starts its own on a free port and says so', async () => {
    const log = await deployments[1]!.server.stdout();
    assert.match(log, new RegExp(`port ${temporalPort} is taken by a Temporal this data dir did not start`));
    assert.match(log, /"reused":false/);
  });

  it('each provisions 5 managed runs at once: all 10 succeed, each in its own service, each command ran once', async () => {
    await provisionFiveEachAndCheck(deployments);
  });
});

describe('two deployments joined to one Temporal cluster (TEMPORAL_ADDRESS), queues left to their defaults', () => {
  let temporal: TestWorkflowEnvironment;
  const dirs: string[] = [];
  const drops: Array<() => Promise<void>> = [];
  const deployments: Deployment[] = [];
  let worker: ProcessGroup | undefined;
  let workerEnv: Record<string, string>;

  before(async () => {
    temporal = await startTemporal();
    for (const name of ['embedded worker', 'standalone worker']) {
      const dir = await mkdtemp(path.join(tmpdir(), 'assay-shared-'));
      dirs.push(dir);
      const database = await createTestDatabase();
      drops.push(database.drop);
      const orchestratorKey = generateOrchestratorKey();
      const standalone = name === 'standalone worker';
      const env = {
        DATABASE_URL: database.url,
        ASSAY_DATA_DIR: path.join(dir, 'data'),
        ASSAY_LOCAL_SANDBOX: 'off',
        TEMPORAL_ADDRESS: temporal.address,
        ...(standalone ? { ASSAY_WORKER: 'off', ASSAY_ORCHESTRATOR_KEY: orchestratorKey } : {}),
      };
      const server = await startLoggedAssayServer(env, dir);
      const key = await takeBootstrapKey(env);
      assert.ok(key, `${name}: a bootstrap admin key`);
      deployments.push({ name, server, key, lines: path.join(dir, 'ran.txt') });
      if (standalone)
        workerEnv = {
          TEMPORAL_ADDRESS: temporal.address,
          ASSAY_LOCAL_SANDBOX: 'off',
          ASSAY_SERVICE_URL: server.url,
          ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
          ASSAY_DATA_DIR: env.ASSAY_DATA_DIR,
        };
    }
  });

  after(async () => {
    await worker?.stop();
    for (const d of deployments) await d.server.stop();
    await temporal?.teardown();
    for (const drop of drops) await drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  function assayWorker(env: Record<string, string>) {
    return spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'worker'], {
      name: 'assay worker',
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stopGraceMs: 5_000,
    });
  }

  it('a standalone worker given another task queue than its service’s refuses to start', async () => {
    const wrong = assayWorker({ ...workerEnv, ASSAY_TASK_QUEUE: 'assay' });
    assert.equal(await wrong.exited, 'exited with code 2');
    assert.match(
      wrong.output(),
      /the service starts workflows on task queue assay-[0-9a-f-]{36}, not ASSAY_TASK_QUEUE=assay/,
    );
  });

  it('each deployment’s workflows stay on its own queue: the standalone worker asks its service which', async () => {
    worker = assayWorker(workerEnv);
    const deadline = Date.now() + 60_000;
    while (!/polling task queue assay-[0-9a-f-]{36} /.test(worker.output())) {
      assert.ok(worker.isRunning() && Date.now() < deadline, `worker not polling: ${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await provisionFiveEachAndCheck(deployments);
  });
});

/** A variation that appends its run number to the deployment's file; 5 runs of it provisioned at once. */
/** Each deployment provisions five runs at once; every run succeeds in its own service, each command once. */
async function provisionFiveEachAndCheck(deployments: Deployment[]): Promise<void> {
  const provisioned = await Promise.all(deployments.map(provisionFive));
  await Promise.all(
    deployments.map(async (d, i) => {
      for (const run of provisioned[i]!) {
        const ended = await waitForEnd(d, run, 180_000);
        assert.equal(ended.state, 'succeeded', `${d.name} run ${run}: ${JSON.stringify(ended)}`);
      }
    }),
  );
  for (const d of deployments) {
    const ran = (await readFile(d.lines, 'utf8')).trim().split('\n').sort();
    assert.deepEqual(ran, ['1', '2', '3', '4', '5'], `${d.name}: each of its commands ran once`);
  }
}

async function provisionFive(d: Deployment): Promise<string[]> {
  const api = httpApi(d.server.url).as(d.key);
  const experiment = await api.post('/experiments', { name: `two-${d.name}`, organization_id: 'personal' });
  assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
  const base = `/experiments/${experiment.body.id}`;
  const launch = { command: `echo "$ASSAY_RUN" >> ${d.lines}` };
  const variation = await api.post(`${base}/variations`, { config_yaml: stringify({ lr: 0.1, launch }) });
  assert.equal(variation.status, 201, JSON.stringify(variation.body));
  assert.equal((await api.post(`${base}/commit`)).status, 200);
  const paths: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await api.post(`${base}/variations/${variation.body.n}/runs`);
    assert.equal(run.status, 201, JSON.stringify(run.body));
    paths.push(`${base}/variations/${variation.body.n}/runs/${run.body.r}`);
  }
  const answers = await Promise.all(paths.map((p) => api.post(`${p}/provision`)));
  for (const answer of answers) assert.equal(answer.status, 202, JSON.stringify(answer.body));
  return paths;
}

async function waitForEnd(d: Deployment, runPath: string, timeoutMs: number) {
  const api = httpApi(d.server.url).as(d.key);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = (await api.get(runPath)).body;
    if (run.state === 'succeeded' || run.state === 'failed') return run;
    assert.ok(Date.now() < deadline, `${d.name} ${runPath} still ${run.state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
