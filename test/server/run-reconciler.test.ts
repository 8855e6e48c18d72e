// A managed run whose workflow could not be started (Temporal down after the `managed` flag committed), or
// whose workflow closed without concluding it, is not left pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('the run reconciler', () => {
  let t: TestService;
  let down: FakeOrchestrator;
  let owner: string;
  let experimentId: string;

  before(async () => {
    down = new FakeOrchestrator();
    down.failing.add('startManagedRun');
    t = await startTestService({ orchestrator: down });
    owner = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, owner)).id;
  });
  after(() => t.close());

  /** A run made managed while Temporal refused: 503, and the run stays managed and pending. */
  async function strandedRun() {
    const run = await createRun(t, owner, experimentId);
    const res = await t.as(owner).post(`${run.path}/provision`);
    assert.deepEqual([res.status, res.body.error?.code], [503, 'orchestrator_unavailable']);
    const read = await t.as(owner).get(run.path);
    assert.deepEqual([read.body.state, read.body.managed], ['pending', true]);
    return { ...run, workflowId: read.body.workflow_id as string };
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('starts the workflow once the orchestrator answers: a service started against it picks the run up', async () => {
    const run = await strandedRun();
    const up = new FakeOrchestrator();
    const replica = await startTestService({ replicaOf: t, orchestrator: up });
    try {
      const start = await until('the workflow start', async () =>
        up.callsOf<{ runId: string }>('startManagedRun').find((c) => c.runId === run.id),
      );
      assert.deepEqual(start, { runId: run.id, experimentId, n: 1, r: run.r, workflowId: run.workflowId });
      assert.equal(
        (await t.as(owner).get(run.path)).body.state,
        'pending',
        'its workflow takes it from here',
      );
    } finally {
      await replica.close();
    }
  });

  it('fails the run provision_failed when the workflow cannot be started for the give-up time', async () => {
    const run = await strandedRun();
    const stillDown = new FakeOrchestrator();
    stillDown.failing.add('startManagedRun');
    const replica = await startTestService({
      replicaOf: t,
      orchestrator: stillDown,
      env: { ASSAY_RECONCILE_INTERVAL_S: '0.1', ASSAY_RECONCILE_GIVE_UP_S: '0.5' },
    });
    try {
      const failed = await until('the run to fail', async () => {
        const read = (await t.as(owner).get(run.path)).body;
        return read.state === 'failed' ? read : undefined;
      });
      assert.equal(failed.failure_reason, 'provision_failed');
      assert.match(failed.failure_message, /workflow could not be started .* orchestrator was unreachable/);
      assert.ok(stillDown.callsOf('startManagedRun').length >= 2, 'it retried before giving up');
    } finally {
      await replica.close();
    }
  });
});

describe('the run reconciler on workflows that closed without concluding their run', () => {
  let t: TestService;
  let fake: FakeOrchestrator;
  let owner: string;

  before(async () => {
    fake = new FakeOrchestrator();
    // The researcher sweeps a launch block of their own.
    t = await startTestService({ orchestrator: fake, env: { ASSAY_LOCAL_COMPUTE_USERS: 'all' } });
    owner = (await t.createUser()).key;
  });
  after(() => t.close());

  const pass = () => t.service.reconciler!.pass();

  it('starts a pending run’s closed workflow again, and leaves an open one alone', async () => {
    const experimentId = (await committedExperiment(t, owner)).id;
    const run = await createRun(t, owner, experimentId);
    const workflowId = (await t.as(owner).post(`${run.path}/provision`)).body.workflow_id as string;
    await pass();
    assert.ok(!fake.restarted.includes(workflowId), 'its workflow is open');
    fake.workflows.set(workflowId, { open: false, status: 'FAILED' });
    const { redriven } = await pass();
    assert.ok(redriven >= 1);
    assert.ok(fake.restarted.includes(workflowId));
    assert.equal((await t.as(owner).get(run.path)).body.state, 'pending', 'the new execution drives it');
  });

  it('fails a sweep’s run whose workflow closed (its sweep moved on), saying why', async () => {
    const experimentId = (await createExperiment(t, owner, { name: 'sweep' })).id;
    const created = await t.as(owner).post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: 'seed: 0\nlaunch:\n  command: python train.py\n',
      list: [{ seed: 1 }],
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const [run] = created.body.runs;
    fake.workflows.set(run.workflow_id, { open: false, status: 'FAILED' });
    const { failed } = await pass();
    assert.ok(failed >= 1);
    assert.ok(!fake.restarted.includes(run.workflow_id), 'not started apart from its sweep');
    const read = (await t.as(owner).get(`/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`))
      .body;
    assert.deepEqual([read.state, read.failure_reason], ['failed', 'provision_failed']);
    assert.equal(
      read.failure_message,
      `its managed-run workflow ${run.workflow_id} ended (failed) without concluding the run; the orchestrator no longer drives it`,
    );
    const sweep = (await t.as(owner).get(`/experiments/${experimentId}/sweeps/${created.body.id}`)).body;
    assert.deepEqual([sweep.progress.failed, sweep.progress.failed_by_reason], [1, { provision_failed: 1 }]);
  });
});
