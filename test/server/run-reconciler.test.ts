// A managed run whose workflow could not be started (Temporal down after the `managed` flag committed) is not left pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
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
