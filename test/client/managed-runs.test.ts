import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AuthenticationError,
  Client,
  NotFoundError,
  PermissionDeniedError,
  ServerError,
  type RunData,
} from '../../src/client/index.ts';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';

const BASE_YAML = 'optimizer:\n  name: adamw\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n';

describe('client: managed runs, sweeps and the orchestrator namespace', () => {
  let t: TestService;
  let bare: TestService;
  let orchestrator: FakeOrchestrator;
  let client: Client;
  let orch: Client;
  /** The /orchestrator/* calls, made with the orchestrator's key as the activities make them. */
  let orchApi: OrchestratorApi;

  /** A committed experiment with one variation (a launch block), and a pending run of it. */
  async function pendingRun(c: Client = client): Promise<RunData> {
    const experiment = await c.experiments.create({ name: `managed ${Date.now()}` });
    await c.variations.create(experiment.id, { configYaml: BASE_YAML, name: 'base' });
    await c.experiments.commit(experiment.id);
    return c.runs.create(experiment.id, 1);
  }

  before(async () => {
    orchestrator = new FakeOrchestrator();
    // The researcher here is not an admin, and their sweeps carry launch commands.
    t = await startTestService({ listen: true, orchestrator, env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' } });
    bare = await startTestService({ listen: true, env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' } });
    client = new Client({ serverUrl: t.url, apiKey: (await t.createUser()).key });
    orch = new Client({ serverUrl: t.url, apiKey: (await mintEmbeddedOrchestratorKey(t.service.db)).token });
    orchApi = new OrchestratorApi(orch.transport);
  });
  after(async () => {
    await t.close();
    await bare.close();
  });

  it('provisions a run once: a repeat answers the same workflow', async () => {
    const run = await pendingRun();
    const first = await client.runs.provision(run.experiment_id, run.n, run.r);
    const again = await client.runs.provision(run.experiment_id, run.n, run.r);
    assert.equal(first.workflow_id, `run-${run.experiment_id}-1-1`);
    assert.equal(again.workflow_id, first.workflow_id);
    assert.deepEqual(
      [first.run.id, first.run.managed, first.run.workflow_id],
      [run.id, true, first.workflow_id],
    );
    assert.equal(first.workflow_url, orchestrator.workflowUrl(first.workflow_id));
    const started = orchestrator
      .callsOf<{ runId: string; workflowId: string }>('startManagedRun')
      .filter((c) => c.runId === run.id);
    assert.deepEqual(
      started.map((c) => c.workflowId),
      [first.workflow_id, first.workflow_id],
      'each provision asks the orchestrator, which finds the same workflow',
    );
    const read = await client.runs.get(run.experiment_id, run.n, run.r);
    assert.deepEqual(
      [read.workflow_id, read.workflow_url, read.recovers_run_id],
      [first.workflow_id, first.workflow_url, null],
    );
  });

  it('raises ServerError 503 orchestrator_unavailable on a server without an orchestrator', async () => {
    const c = new Client({ serverUrl: bare.url, apiKey: (await bare.createUser()).key });
    const run = await pendingRun(c);
    const unavailable = (e: unknown) =>
      e instanceof ServerError && e.statusCode === 503 && e.code === 'orchestrator_unavailable';
    await assert.rejects(c.runs.provision(run.experiment_id, 1, 1), unavailable);
    const draft = await c.experiments.create({ name: 'no orchestrator' });
    await assert.rejects(
      c.sweeps.create(draft.id, { baseYaml: BASE_YAML, grid: { seed: [1] } }),
      unavailable,
    );
  });

  it('creates a sweep from a grid, reads it and cancels it', async () => {
    const experiment = await client.experiments.create({ name: 'lr sweep' });
    const sweep = await client.sweeps.create(experiment.id, {
      baseYaml: BASE_YAML,
      grid: { 'optimizer.lr': [1e-4, 3e-4], seed: [1, 2, 3] },
      concurrency: 2,
      namePrefix: 'lr',
    });
    assert.deepEqual([sweep.experiment_id, sweep.concurrency, sweep.runs.length], [experiment.id, 2, 6]);
    assert.ok(sweep.workflow_id.length > 0);
    const variations = await client.variations.list(experiment.id);
    assert.deepEqual(
      variations
        .map((v) => [(v.config_json.optimizer as Record<string, unknown>).lr, v.config_json.seed])
        .sort(),
      [
        [1e-4, 1],
        [1e-4, 2],
        [1e-4, 3],
        [3e-4, 1],
        [3e-4, 2],
        [3e-4, 3],
      ].sort(),
    );
    for (const run of sweep.runs) assert.equal(run.workflow_id, `run-${experiment.id}-${run.n}-${run.r}`);

    assert.deepEqual(
      [sweep.workflow_id, sweep.workflow_url],
      [`sweep-${sweep.id}`, orchestrator.workflowUrl(`sweep-${sweep.id}`)],
    );
    assert.deepEqual(
      orchestrator
        .callsOf<{ sweepId: string; concurrency: number }>('startSweep')
        .filter((c) => c.sweepId === sweep.id)
        .map((c) => c.concurrency),
      [2],
    );
    assert.equal((await client.experiments.get(experiment.id)).state, 'committed');

    const read = await client.sweeps.get(experiment.id, sweep.id);
    assert.deepEqual(
      [read.id, read.workflow_id, read.runs.map((r) => r.n)],
      [sweep.id, sweep.workflow_id, sweep.runs.map((r) => r.n)],
    );
    // Counted from the runs' states: none has started yet.
    const total = sweep.runs.length;
    assert.deepEqual(read.progress, {
      total,
      pending: total,
      running: 0,
      succeeded: 0,
      failed: 0,
      stopped_early: 0,
      retried: 0,
      failed_by_reason: {},
      done: false,
    });
    const cancelled = await client.sweeps.cancel(experiment.id, sweep.id);
    assert.equal(cancelled.id, sweep.id);
    assert.ok(orchestrator.callsOf('cancelSweep').includes(sweep.workflow_id));
    await assert.rejects(
      client.sweeps.get(experiment.id, '00000000-0000-4000-8000-000000000000'),
      NotFoundError,
    );
  });

  it('creates a sweep from a list, one variation per entry', async () => {
    const experiment = await client.experiments.create({ name: 'optimizer list' });
    const sweep = await client.sweeps.create(experiment.id, {
      baseYaml: BASE_YAML,
      list: [{ 'optimizer.name': 'sgd', 'optimizer.lr': 0.1 }, { 'optimizer.name': 'adamw' }],
    });
    assert.equal(sweep.runs.length, 2);
    const optimizers = (await client.variations.list(experiment.id)).map((v) => v.config_json.optimizer);
    assert.deepEqual(optimizers, [
      { name: 'sgd', lr: 0.1 },
      { name: 'adamw', lr: 3e-4 },
    ]);
  });

  it('declares a sweep’s objective, early stopping and retries, lists the experiment’s sweeps and reads the best', async () => {
    const experiment = await client.experiments.create({ name: 'objective list' });
    const sweep = await client.sweeps.create(experiment.id, {
      baseYaml: BASE_YAML,
      list: [{ 'optimizer.lr': 0.1 }, { 'optimizer.lr': 0.01 }],
      objective: { metric: 'val_loss', goal: 'minimize' },
      earlyStopping: { kind: 'median', startup_trials: 1 },
      maxRetries: 2,
    });
    assert.deepEqual(
      [sweep.declaration.strategy, sweep.declaration.trials, sweep.declaration.max_retries],
      ['list', 2, 2],
    );
    assert.deepEqual(sweep.declaration.objective, { metric: 'val_loss', goal: 'minimize' });
    assert.equal(sweep.declaration.early_stopping?.kind, 'median');
    assert.deepEqual(
      sweep.runs.map((r) => r.params),
      [{ 'optimizer.lr': 0.1 }, { 'optimizer.lr': 0.01 }],
    );
    const run = sweep.runs[1]!;
    const path = `/experiments/${experiment.id}/variations/${run.n}/runs/${run.r}`;
    await client.transport.get(`${path}/config`);
    await client.transport.post(`${path}/start`, {});
    await client.transport.post(`${path}/metrics`, { metrics: [{ key: 'val_loss', step: 3, value: 0.25 }] });
    await client.transport.post(`${path}/succeed`);

    const page = await client.sweeps.list(experiment.id, { limit: 10 });
    assert.deepEqual(
      [page.items.map((s) => [s.id, s.best_value, s.progress.succeeded]), page.next_cursor],
      [[[sweep.id, 0.25, 1]], null],
    );
    const all = [];
    for await (const s of client.sweeps.iterate(experiment.id)) all.push(s.id);
    assert.deepEqual(all, [sweep.id]);
    const read = await client.sweeps.get(experiment.id, sweep.id);
    assert.deepEqual(
      [read.best?.n, read.best?.value, read.best?.params, read.runs[1]!.step],
      [run.n, 0.25, { 'optimizer.lr': 0.01 }, 3],
    );
    await assert.rejects(client.sweeps.list('00000000-0000-4000-8000-000000000000'), NotFoundError);
  });

  /** A pending run made managed: the orchestrator's routes know managed runs only. */
  async function managedRun(): Promise<RunData> {
    const run = await pendingRun();
    return (await client.runs.provision(run.experiment_id, run.n, run.r)).run;
  }

  it('gives the orchestrator its run, an exchange token for a worker key it can revoke, the instance, failure and recovery', async () => {
    const run = await managedRun();
    const got = await orchApi.getRun(run.id);
    assert.deepEqual([got.run.id, got.launch_config], [run.id, { command: 'python train.py' }]);

    const exchangeToken = await orchApi.mintExchangeToken(run.id);
    assert.match(exchangeToken.token, /^sk_exchange_/);
    const workerKey = await t.request('POST', '/worker-keys/exchange', { key: exchangeToken.token });
    assert.match(workerKey.body.key, /^sk_worker_/);
    const worker = new Client({ serverUrl: t.url, apiKey: workerKey.body.key });
    const config = await worker.runs.config(run.experiment_id, run.n, run.r);
    assert.deepEqual(config.config_json, { optimizer: { name: 'adamw', lr: 3e-4 }, seed: 0 });
    assert.deepEqual(await orchApi.revokeWorkerKeys(run.id), { revoked: 1 });
    await assert.rejects(worker.runs.config(run.experiment_id, run.n, run.r), AuthenticationError);

    const instance = { provider: 'local', instance_id: 'pid-4242', state: 'running' };
    assert.deepEqual((await orchApi.recordInstance(run.id, instance)).instance, instance);
    assert.deepEqual(await orchApi.listRunAssets(run.id), { items: [] });

    const failed = await orchApi.failRun(run.id, 'provision_failed', 'no capacity');
    assert.deepEqual(
      [failed.state, failed.failure_reason, failed.failure_message],
      ['failed', 'provision_failed', 'no capacity'],
    );
    const recovery = await orchApi.createRecoveryRun(run.id);
    assert.deepEqual(
      [recovery.state, recovery.recovers_run_id, recovery.n, recovery.r, recovery.managed],
      ['pending', run.id, run.n, run.r + 1, true],
    );
    assert.notEqual(recovery.id, run.id);
    assert.equal(
      (await orchApi.createRecoveryRun(run.id)).id,
      recovery.id,
      'asking again answers the same recovery run',
    );
  });

  it('cancels a run for the orchestrator, and refuses the namespace to other keys and unmanaged runs', async () => {
    const run = await managedRun();
    const cancelled = await orchApi.cancelRun(run.id);
    assert.deepEqual([cancelled.state, cancelled.failure_reason], ['failed', 'abandoned']);
    await assert.rejects(
      new OrchestratorApi(client.transport).getRun(run.id),
      (e: unknown) => e instanceof PermissionDeniedError && e.code === 'insufficient_scope',
    );
    await assert.rejects(
      orch.runs.get(run.experiment_id, run.n, run.r),
      PermissionDeniedError,
      'the orchestrator key reaches /orchestrator/* alone',
    );
    const unmanaged = await pendingRun();
    await assert.rejects(orchApi.getRun(unmanaged.id), NotFoundError);
  });
});
