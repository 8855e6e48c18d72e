// The saga under faults: a worker killed mid-saga, the service down for a while, an instance lost.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { startWorker, workflowBundle } from '../../src/worker.ts';
import { startAssayServer } from '../support/assay-server.ts';
import { managedRunWorld } from '../support/managed-runs.ts';
import {
  recordHistory,
  startOrchestration,
  startTemporal,
  type Orchestration,
} from '../support/orchestration.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { spawnProcessGroup } from '../support/process-group.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('managed runs under faults', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await startTemporal();
  });
  after(async () => {
    await env?.teardown();
  });

  describe('with the worker in a process of its own', () => {
    let world: Orchestration;
    let m: ReturnType<typeof managedRunWorld>;
    before(async () => {
      world = await startOrchestration({ env });
      m = managedRunWorld(world);
    });
    after(async () => {
      await m?.assertNoInstanceLeft();
      await world?.close();
    });

    function workerProcess() {
      return spawnProcessGroup(process.execPath, [path.join(repoRoot, 'bin/assay.js'), 'worker'], {
        name: 'assay worker',
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TEMPORAL_ADDRESS: env.address,
          ASSAY_TASK_QUEUE: world.taskQueue,
          ASSAY_SERVICE_URL: world.svc.url,
          ASSAY_ORCHESTRATOR_KEY: world.orchestratorKey,
          // The same instances directory as the test's provider, so the test sees what the worker started.
          ASSAY_DATA_DIR: path.dirname(world.stateDir),
          // The test's researchers are not admins; this worker starts their runs on `local` all the same.
          ASSAY_LOCAL_COMPUTE_USERS: 'all',
        },
        stopGraceMs: 0,
      });
    }

    test('the worker killed mid-saga and restarted: the saga finishes with exactly one instance, terminated', async () => {
      const first = workerProcess();
      const run = await m.pendingRun('sleep 4');
      const provisioned = await m.provision(run);
      assert.equal(provisioned.status, 202);
      await m.waitForState(run, 'running', 40_000);
      process.kill(-first.pid, 'SIGKILL');
      await first.exited;
      const second = workerProcess();
      try {
        const result = await m.result(provisioned.body.workflow_id);
        assert.equal(result.state, 'succeeded', JSON.stringify(result));
        assert.equal(await world.instancesStarted(), 1, 'one instance, ever');
        assert.equal(
          await world.provider.describe(provisioned.body.workflow_id),
          undefined,
          'and it is gone',
        );
        assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 1 });
        await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-worker-killed');
      } finally {
        await second.stop();
      }
    });
  });

  describe('with the service as a real process', () => {
    test('the service down for a while: activities retry, the run succeeds, nothing is lost', async (t) => {
      const database = await createTestDatabase();
      const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-svc-'));
      const stateDir = await mkdtemp(path.join(tmpdir(), 'assay-local-'));
      t.after(() => rm(dataDir, { recursive: true, force: true }));
      t.after(() => rm(stateDir, { recursive: true, force: true }));
      const orchestratorKey = generateOrchestratorKey();
      const taskQueue = `assay-down-${Date.now()}`;
      const serverEnv = {
        DATABASE_URL: database.url,
        ASSAY_DATA_DIR: dataDir,
        TEMPORAL_ADDRESS: env.address,
        ASSAY_TASK_QUEUE: taskQueue,
        ASSAY_WORKER: 'off',
        ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
        ASSAY_LOG_LEVEL: 'warn',
      };
      let server = await startAssayServer(serverEnv);
      t.after(() => server.stop());
      const adminKey = server.bootstrapKey!;
      const provider = new LocalProvider({
        stateDir,
        runnerArgv: [
          process.execPath,
          path.join(repoRoot, 'bin/assay.js'),
          'run',
          '--heartbeat-interval',
          '0.5',
          '--',
        ],
        graceMs: 1000,
      });
      const worker = await startWorker({
        address: env.address,
        namespace: 'default',
        taskQueue,
        serviceUrl: server.url,
        orchestratorKey,
        runnerServerUrl: server.url,
        provider,
        maxActivities: 10,
        maxWorkflows: 10,
        workflowBundle: await workflowBundle(),
      });
      t.after(() => worker.stop());

      const call = async (method: string, url: string, body?: unknown) => {
        const res = await fetch(`${server.url}${url}`, {
          method,
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const experiment = await call('POST', '/experiments', { name: 'outage', organization_id: 'personal' });
      // The command ends only once the test says the service is back: its output upload and its succeed must
      // not race the outage.
      const backFlag = path.join(dataDir, 'service-is-back');
      await call('POST', `/experiments/${experiment.body.id}/variations`, {
        config_yaml: stringify({
          launch: {
            command:
              'while [ ! -f "$BACK_FLAG" ]; do sleep 0.2; done; mkdir -p outputs && echo ok > outputs/after-outage.txt',
            env: { BACK_FLAG: backFlag },
          },
        }),
      });
      await call('POST', `/experiments/${experiment.body.id}/commit`);
      const run = await call('POST', `/experiments/${experiment.body.id}/variations/1/runs`);
      const runPath = `/experiments/${experiment.body.id}/variations/1/runs/${run.body.r}`;
      const provisioned = await call('POST', `${runPath}/provision`);
      assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
      for (let i = 0; (await call('GET', runPath)).body.state !== 'running'; i++) {
        assert.ok(i < 200, 'run started');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // Down hard, for longer than several of the watch's polls and the runner's heartbeats.
      process.kill(-server.process.pid, 'SIGKILL');
      await server.process.exited;
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      server = await startAssayServer({ ...serverEnv, PORT: new URL(server.url).port });
      await writeFile(backFlag, '');

      const result = await env.client.workflow.getHandle(provisioned.body.workflow_id).result();
      assert.equal(result.state, 'succeeded', JSON.stringify(result));
      assert.deepEqual(result.outputs, { ready: 1, pending: 0 });
      const detail = await call('GET', runPath);
      assert.equal(detail.body.state, 'succeeded');
      assert.equal(await provider.describe(provisioned.body.workflow_id), undefined);
    });
  });

  describe('instance loss', () => {
    let world: Orchestration;
    let m: ReturnType<typeof managedRunWorld>;
    before(async () => {
      world = await startOrchestration({ env, saga: { maxRecoveries: 1 } });
      await world.startWorker();
      m = managedRunWorld(world);
    });
    after(async () => {
      await m?.assertNoInstanceLeft();
      await world?.close();
    });

    test('an instance lost mid-run: the run fails crash and a new run of the variation resumes from its checkpoint', async () => {
      // Step 1 writes a checkpoint and waits to be killed; a run that finds a checkpoint resumes
      // and finishes.
      const script = [
        'set -e',
        'mkdir -p outputs/checkpoints',
        'if ckpt=$("$NODE_BIN" "$RESUME_HELPER"); then',
        '  echo "resumed from $ckpt" > outputs/resumed.txt',
        'else',
        '  echo step-1 > outputs/checkpoints/step-1.ckpt',
        '  sleep 60',
        'fi',
      ].join('\n');
      const run = await m.pendingRun(script, {
        NODE_BIN: process.execPath,
        RESUME_HELPER: path.join(repoRoot, 'test/fixtures/resume-from-checkpoint.ts'),
      });
      const provisioned = await m.provision(run);
      await m.waitForState(run, 'running');
      // The checkpoint must be ready before the machine dies.
      await waitForReadyCheckpoint(world, m, run);
      await m.killInstance(provisioned.body.workflow_id);

      const result = await m.result(provisioned.body.workflow_id);
      assert.deepEqual([result.state, result.failureReason], ['failed', 'crash']);
      assert.ok(result.recoveredBy, JSON.stringify(result));
      assert.equal(result.recoveredBy.state, 'succeeded');
      const lost = await m.getRun(run);
      assert.match(lost.failure_message, /instance was lost/);
      const recovery = await m.getRun({ experimentId: run.experimentId, n: run.n, r: run.r + 1 });
      assert.equal(recovery.state, 'succeeded');
      assert.equal(recovery.recovers_run_id, run.id);
      const assets = (
        await world.svc.as(m.key()).get(`/assets?experiment_id=${run.experimentId}&n=${run.n}&r=${run.r + 1}`)
      ).body.items;
      const resumed = assets.find((a: any) => a.name === 'resumed.txt');
      assert.ok(resumed, JSON.stringify(assets));
      await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-instance-lost-recovered');
    });
  });
});

async function waitForReadyCheckpoint(
  world: Orchestration,
  m: ReturnType<typeof managedRunWorld>,
  run: { experimentId: string; n: number; r: number },
) {
  for (let i = 0; i < 200; i++) {
    const res = await world.svc.as(m.key()).get(`${m.runPath(run)}/checkpoint`);
    if (res.status === 200) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail('no checkpoint became ready');
}
