// A managed run on `local` cancelled through the API: its runner hears the cancel on the control long-poll
// (heartbeats every 30 s here, so nothing else could tell it in time), the program gets SIGTERM, and the run
// ends failed/abandoned as the runner reported it, well within the saga's cancel grace.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { managedRunWorld } from '../support/managed-runs.ts';
import { startOrchestration, type Orchestration } from '../support/orchestration.ts';

describe('managed run cancelled through the API', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-cancel-'));
    world = await startOrchestration({ heartbeatS: 30, saga: { cancelGraceMs: 20_000 } });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the program gets SIGTERM, the runner fails the run abandoned, the instance ends', async () => {
    const marker = path.join(dir, 'term');
    const run = await m.pendingRun(
      `trap 'echo stopped > ${marker}; exit 143' TERM; for i in $(seq 300); do sleep 0.2; done`,
    );
    const provisioned = await m.provision(run);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    await m.waitForState(run, 'running');
    const cancelled = await m
      .svc()
      .as(m.key())
      .post(`${m.runPath(run)}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'abandoned']);
    const detail = await m.getRun(run);
    // The runner's own report, not the saga's "did not stop within the grace".
    assert.equal(detail.failure_message, 'cancelled; command: exit code 143');
    assert.equal(detail.cancel_reason, 'cancelled');
    assert.equal(await readFile(marker, 'utf8'), 'stopped\n');
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
  });

  test("a program ignoring SIGTERM is SIGKILLed after the launch block's ASSAY_RUN_GRACE_S, before the saga's grace", async () => {
    const marker = path.join(dir, 'ignored');
    const run = await m.pendingRun(
      `trap 'echo ignored > ${marker}' TERM; for i in $(seq 300); do sleep 0.2; done`,
      { ASSAY_RUN_GRACE_S: '1' },
    );
    const provisioned = await m.provision(run);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    await m.waitForState(run, 'running');
    assert.equal(
      (
        await m
          .svc()
          .as(m.key())
          .post(`${m.runPath(run)}/cancel`)
      ).status,
      200,
    );
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'abandoned']);
    // The runner killed it after its own grace and reported; the saga (20 s here) did not have to.
    assert.equal((await m.getRun(run)).failure_message, 'cancelled; command: killed by SIGKILL');
    assert.equal(await readFile(marker, 'utf8'), 'ignored\n');
  });
});
