// A managed run whose workflow closed without concluding it (terminated by hand here; in the wild, failed
// by a worker of another deployment on a shared task queue) is driven again or failed, never left pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { managedRunWorld, type PendingRun } from '../support/managed-runs.ts';
import { startOrchestration, type Orchestration } from '../support/orchestration.ts';

describe('managed runs whose workflow closed without concluding them', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;
  before(async () => {
    // No worker at first: a started workflow stays open until the test closes it.
    world = await startOrchestration();
    m = managedRunWorld(world);
  });
  after(async () => {
    try {
      await m?.assertNoInstanceLeft();
    } finally {
      await world?.close();
    }
  });

  const handle = (workflowId: string) => world.env.client.workflow.getHandle(workflowId);
  const reconcile = () => world.svc.service.reconciler!.pass();

  async function provisioned(command: string): Promise<PendingRun & { workflowId: string }> {
    const run = await m.pendingRun(command);
    const res = await m.provision(run);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return { ...run, workflowId: res.body.workflow_id };
  }

  /** Closes the workflow's open execution as a foreign worker's failure would; answers its run id. */
  async function close(workflowId: string): Promise<string> {
    const { runId, status } = await handle(workflowId).describe();
    assert.equal(status.name, 'RUNNING');
    await handle(workflowId).terminate('closed by the test: nobody concluded the run');
    return runId;
  }

  it('the reconciler starts a pending run’s closed workflow again, then fails the run with a readable reason', async () => {
    const run = await provisioned('true');
    let closed = await close(run.workflowId);
    for (let time = 1; time <= 2; time++) {
      const pass = await reconcile();
      assert.ok(pass.redriven >= 1, JSON.stringify(pass));
      const now = await handle(run.workflowId).describe();
      assert.equal(now.status.name, 'RUNNING', `restart ${time}: a new execution drives the run`);
      assert.notEqual(now.runId, closed);
      assert.equal((await m.getRun(run)).state, 'pending');
      closed = await close(run.workflowId);
    }
    const pass = await reconcile();
    assert.ok(pass.failed >= 1, JSON.stringify(pass));
    const failed = await m.getRun(run);
    assert.deepEqual([failed.state, failed.failure_reason], ['failed', 'provision_failed']);
    assert.match(
      failed.failure_message,
      new RegExp(
        `workflow ${run.workflowId} ended \\(terminated\\) without concluding the run, also after 2 restart`,
      ),
    );
    assert.equal((await handle(run.workflowId).describe()).status.name, 'TERMINATED', 'not started again');
  });

  it('provisioning a pending run whose workflow closed starts a new execution, which the worker takes to success', async () => {
    const run = await provisioned('true');
    const closed = await close(run.workflowId);
    assert.equal((await m.getRun(run)).state, 'pending', 'nobody concluded it');
    const again = await m.provision(run);
    assert.deepEqual([again.status, again.body.workflow_id], [202, run.workflowId]);
    const now = await handle(run.workflowId).describe();
    assert.equal(now.status.name, 'RUNNING');
    assert.notEqual(now.runId, closed, 'a new execution');
    await world.startWorker();
    await m.waitForState(run, 'succeeded', 60_000);
    assert.equal((await m.result(run.workflowId)).state, 'succeeded');
    const repeat = await m.provision(run);
    assert.deepEqual([repeat.status, repeat.body.workflow_id], [202, run.workflowId], 'the same workflow');
    const last = await handle(run.workflowId).describe();
    assert.deepEqual(
      [last.status.name, last.runId],
      ['COMPLETED', now.runId],
      'an ended run is not driven again',
    );
  });

  it('the reconciler fails a running run whose workflow closed, saying why', async () => {
    const run = await provisioned('sleep 30');
    await m.waitForState(run, 'running', 40_000);
    // The runner holds the run's worker key; the failed run must not leave it working.
    assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 0 });
    await close(run.workflowId);
    const pass = await reconcile();
    assert.ok(pass.failed >= 1, JSON.stringify(pass));
    const failed = await m.getRun(run);
    assert.deepEqual([failed.state, failed.failure_reason], ['failed', 'crash']);
    assert.match(failed.failure_message, /ended \(terminated\) without concluding the run; the orchestrator/);
    assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 1 }, 'its worker key is revoked');
    // Nothing terminates its instance any more (the saga that would is gone): the test does.
    await world.provider.terminate(run.workflowId);
  });
});
