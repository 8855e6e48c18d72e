// The provisioning activity retried, or run twice at once, for the same workflow id: the live instance keeps
// its worker key, and an instance the first attempt started but could not record is recorded by the retry.
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

describe('provisionInstance retried or overlapping for one workflow id', () => {
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

  /**
   * The run's worker keys as its owner lists them (the instance's runner bought one with its exchange token).
   */
  async function workerKeys(runId: string) {
    return (await t.as(t.adminKey).get('/api-keys')).body.items.filter((k: any) => k.run_id === runId);
  }

  /** Waits for three heartbeats: the instance's runner authenticates with its key and keeps reporting. */
  async function keepsReporting(runPath: string) {
    const deadline = Date.now() + 20_000;
    const beats = new Set<string>();
    while (beats.size < 3) {
      assert.ok(Date.now() < deadline, 'the runner kept reporting');
      const run = await read(runPath);
      if (run.last_heartbeat_at) beats.add(run.last_heartbeat_at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await read(runPath)).state, 'running');
  }

  const orchestratorApi = () =>
    new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 });

  it('the retry finds the live instance, records it, and mints nothing: the runner keeps reporting', async () => {
    const { ref, runPath } = await managedRun('sleep 30');
    // The first attempt starts the instance, then dies before it can record it.
    const crashing = orchestratorApi();
    crashing.recordInstance = () => Promise.reject(new Error('worker died'));
    const first = createActivities({ api: crashing, provider, runnerServerUrl: t.url! });
    await assert.rejects(new MockActivityEnvironment().run(first.provisionInstance, ref), /worker died/);
    assert.equal((await read(runPath)).instance, null);

    const api = orchestratorApi();
    let minted = 0;
    const mint = api.mintExchangeToken.bind(api);
    api.mintExchangeToken = (runId) => (minted++, mint(runId));
    const retry = createActivities({ api, provider, runnerServerUrl: t.url! });
    const instance = (await new MockActivityEnvironment().run(retry.provisionInstance, ref)) as {
      instanceId: string | null;
    };
    assert.ok(instance.instanceId, 'an instance');
    const again = await new MockActivityEnvironment().run(retry.provisionInstance, ref);
    assert.deepEqual(again, instance, 'one instance for the workflow id');
    assert.equal(minted, 0, 'the retries minted no exchange token');
    assert.equal((await read(runPath)).instance?.instance_id, instance.instanceId, 'the retry recorded it');

    await keepsReporting(runPath);
    assert.deepEqual(
      (await workerKeys(ref.runId)).map((k: any) => k.revoked_at),
      [null],
      'one worker key, bought by the instance, still valid',
    );
    await provider.terminate(ref.workflowId);
  });

  it('two attempts at once: each mints a token, one instance starts, and its key survives the other', async () => {
    const { ref, runPath } = await managedRun('sleep 30');
    // Attempt A mints its token and waits until B has minted too, then starts the instance with its own
    // token; B finds that instance. Minting B's token must leave whatever A's instance does alone.
    const bMinted = Promise.withResolvers<void>();
    const apiA = orchestratorApi();
    const mintA = apiA.mintExchangeToken.bind(apiA);
    apiA.mintExchangeToken = async (runId) => {
      const token = await mintA(runId);
      await bMinted.promise;
      return token;
    };
    const apiB = orchestratorApi();
    const mintB = apiB.mintExchangeToken.bind(apiB);
    apiB.mintExchangeToken = async (runId) => {
      const token = await mintB(runId);
      bMinted.resolve();
      // B starts its provision only once A's instance exists, so B's token is the one left unused.
      await new Promise((resolve) => setTimeout(resolve, 300));
      return token;
    };
    const [a, b] = await Promise.all(
      [apiA, apiB].map((api) =>
        new MockActivityEnvironment().run(
          createActivities({ api, provider, runnerServerUrl: t.url! }).provisionInstance,
          ref,
        ),
      ),
    );
    assert.deepEqual(a, b, 'one instance for the workflow id');
    assert.equal((await read(runPath)).instance?.instance_id, (a as { instanceId: string }).instanceId);
    await keepsReporting(runPath);
    assert.deepEqual(
      (await workerKeys(ref.runId)).map((k: any) => k.revoked_at),
      [null],
      'one worker key, still valid',
    );
    await provider.terminate(ref.workflowId);
  });
});
