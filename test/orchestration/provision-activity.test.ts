// The provisioning activity retried for the same workflow id: the live instance keeps its worker key, and an
// instance the first attempt started but could not record is recorded by the retry.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { createActivities } from '../../activities/index.ts';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('provisionInstance retried for one workflow id', () => {
  let t: TestService;
  let dataDir: string;
  let provider: LocalProvider;
  let orchestratorKey: string;

  before(async () => {
    t = await startTestService({ listen: true, orchestrator: new FakeOrchestrator() });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-provision-'));
    const runnerArgv = [
      process.execPath,
      path.join(repoRoot, 'bin', 'assay.js'),
      'run',
      '--heartbeat-interval',
      '0.2',
      '--',
    ];
    // The default policy: admins only; the run below is the bootstrap admin's.
    provider = new LocalProvider({ stateDir: path.join(dataDir, 'instances'), runnerArgv, graceMs: 2_000 });
  });
  after(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function managedRun(command: string) {
    const api = t.as(t.adminKey);
    const experiment = await api.post('/experiments', { name: 'retry', organization_id: 'personal' });
    const id = experiment.body.id as string;
    const variation = await api.post(`/experiments/${id}/variations`, {
      config_yaml: stringify({ launch: { command } }),
    });
    assert.equal(variation.status, 201, JSON.stringify(variation.body));
    assert.equal((await api.post(`/experiments/${id}/commit`)).status, 200);
    const run = await api.post(`/experiments/${id}/variations/1/runs`);
    const runPath = `/experiments/${id}/variations/1/runs/${run.body.r}`;
    const provisioned = await api.post(`${runPath}/provision`);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    const ref = {
      runId: run.body.id,
      workflowId: provisioned.body.workflow_id,
      experimentId: id,
      n: 1,
      r: run.body.r,
    };
    return { ref, runPath };
  }

  async function read(runPath: string) {
    return (await t.as(t.adminKey).get(runPath)).body;
  }

  it('the retry finds the live instance, records it, and mints no key: the runner keeps reporting', async () => {
    const { ref, runPath } = await managedRun('sleep 30');
    // The first attempt starts the instance, then dies before it can record it.
    const crashing = new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 });
    crashing.recordInstance = () => Promise.reject(new Error('worker died'));
    const first = createActivities({ api: crashing, provider, runnerServerUrl: t.url! });
    await assert.rejects(new MockActivityEnvironment().run(first.provisionInstance, ref), /worker died/);
    assert.equal((await read(runPath)).instance, null);

    const api = new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 });
    const retry = createActivities({ api, provider, runnerServerUrl: t.url! });
    const instance = (await new MockActivityEnvironment().run(retry.provisionInstance, ref)) as {
      instanceId: string;
    };
    const again = await new MockActivityEnvironment().run(retry.provisionInstance, ref);
    assert.deepEqual(again, instance, 'one instance for the workflow id');
    assert.equal((await read(runPath)).instance?.instance_id, instance.instanceId, 'the retry recorded it');

    const keys = (await t.as(t.adminKey).get('/api-keys')).body.items.filter(
      (k: any) => k.run_id === ref.runId,
    );
    assert.deepEqual(
      keys.map((k: any) => k.revoked_at),
      [null],
      'one worker key, still valid',
    );
    // The instance's runner authenticates with that key: it starts the run and keeps heartbeating.
    const deadline = Date.now() + 20_000;
    const beats = new Set<string>();
    while (beats.size < 3) {
      assert.ok(Date.now() < deadline, 'the runner kept reporting');
      const run = await read(runPath);
      if (run.last_heartbeat_at) beats.add(run.last_heartbeat_at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await read(runPath)).state, 'running');
    await provider.terminate(ref.workflowId);
  });
});
