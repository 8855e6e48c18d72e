// The managed-run saga on a real Temporal dev server, the real service and real runner processes.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  recordHistory,
  startOrchestration,
  startTemporal,
  type Orchestration,
} from '../support/orchestration.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/definitions.ts';
import { managedRunWorld } from '../support/managed-runs.ts';

describe('managed runs', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;

  before(async () => {
    world = await startOrchestration({ saga: { startTimeoutMs: 4_000, silenceTimeoutMs: 2_000 } });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  test('happy path: provisioned, a real script runs and uploads an output, the run succeeds, the instance ends, the key is revoked', async () => {
    const run = await m.pendingRun(
      'mkdir -p outputs && echo "loss 0.1" > outputs/result.txt && echo "epoch 1 done" && echo oops >&2',
    );
    const provisioned = await m.provision(run);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    assert.equal(provisioned.body.workflow_id, `run-${run.experimentId}-${run.n}-${run.r}`);
    assert.match(
      provisioned.body.workflow_url,
      /^http:\/\/temporal-ui\.test\/namespaces\/default\/workflows\/run-/,
    );
    const result = await m.result(provisioned.body.workflow_id);
    assert.equal(result.state, 'succeeded', JSON.stringify([result, await m.getRun(run)]));
    assert.deepEqual(result.outputs, { ready: 1, pending: 0 });

    const detail = await m.getRun(run);
    assert.equal(detail.state, 'succeeded');
    assert.equal(detail.managed, true);
    assert.equal(detail.workflow_id, provisioned.body.workflow_id);
    assert.equal(detail.instance.provider, 'local');
    // The conclusion records the instance's final state: the run page never shows it "running" again.
    assert.equal(detail.instance.state, 'terminated');
    assert.equal(detail.environment === null, false, 'the runner reported its environment');
    const assets = await m
      .svc()
      .as(m.key())
      .get(`/assets?experiment_id=${run.experimentId}&n=${run.n}&r=${run.r}`);
    assert.deepEqual(
      assets.body.items.map((a: any) => [a.name, a.state]),
      [['result.txt', 'ready']],
    );
    // What the command printed is the run's console log, shipped by the instance's runner with its worker key.
    const log = await m
      .svc()
      .as(m.key())
      .get(`/experiments/${run.experimentId}/variations/${run.n}/runs/${run.r}/logs`);
    assert.deepEqual(
      log.body.lines.map((l: any) => [l.seq, l.stream, l.text]),
      [
        [1, 'stdout', 'epoch 1 done'],
        [2, 'stderr', 'oops'],
      ],
    );
    assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 1 });
    assert.equal(
      await world.provider.describe(provisioned.body.workflow_id),
      undefined,
      'instance terminated',
    );
    await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-succeeded');
  });

  test('a second provision of the same run is the same workflow and the same single instance', async () => {
    const run = await m.pendingRun('sleep 1');
    const first = await m.provision(run);
    const second = await m.provision(run);
    assert.equal(second.status, 202);
    assert.equal(second.body.workflow_id, first.body.workflow_id);
    assert.equal((await m.result(first.body.workflow_id)).state, 'succeeded');
    const third = await m.provision(run);
    assert.equal(third.status, 202, 'a finished managed run still answers with its workflow');
    assert.equal(third.body.workflow_id, first.body.workflow_id);
    assert.equal(await m.instancesOf(first.body.workflow_id), 1);
    assert.equal((await m.getRun(run)).state, 'succeeded');
  });

  test('provision failure: a variation without a launch command fails provision_failed, nothing left behind', async () => {
    const run = await m.pendingRun(undefined);
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'provision_failed']);
    const detail = await m.getRun(run);
    assert.match(detail.failure_message, /launch\.command/);
    assert.equal(await m.instancesOf(provisioned.body.workflow_id), 0);
  });

  test('a command that cannot be started: the runner started, so the run fails crash, and the saga cleans up', async () => {
    const run = await m.pendingRun(['/nonexistent/binary-that-is-not-there']);
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'crash']);
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
    assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 1 });
  });

  test('heartbeats stop: the watchdog fails the run heartbeat_timeout and terminates the instance', async () => {
    const run = await m.pendingRun('sleep 60');
    const provisioned = await m.provision(run);
    await m.waitForState(run, 'running');
    await m.freezeInstance(provisioned.body.workflow_id);
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'heartbeat_timeout']);
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
    await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-heartbeat-timeout');
  });

  test('cancel through the API: the runner is asked to stop and the run ends abandoned', async () => {
    const run = await m.pendingRun('sleep 60');
    const provisioned = await m.provision(run);
    await m.waitForState(run, 'running');
    const cancelled = await m
      .svc()
      .as(m.key())
      .post(`${m.runPath(run)}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'abandoned']);
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
  });

  test("cancel from Temporal (the UI's cancel): same outcome, and a runner that ignores it is terminated after the grace", async () => {
    const run = await m.pendingRun('trap "" TERM; sleep 60');
    const provisioned = await m.provision(run);
    await m.waitForState(run, 'running');
    const handle = world.env.client.workflow.getHandle(provisioned.body.workflow_id);
    await handle.cancel();
    await assert.rejects(handle.result(), /cancel/i);
    const detail = await m.getRun(run);
    assert.deepEqual([detail.state, detail.failure_reason], ['failed', 'abandoned']);
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
    assert.deepEqual(await m.workerKeys(run), { total: 1, revoked: 1 });
    await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-cancelled-in-temporal');
  });
});

// The spawned runner (ASSAY_LOCAL_RUNNER=spawn, and launches with cgroup limits or GPUs): a Node start per run,
// which can fail or stall before the run starts.
describe('managed runs on spawned runners', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;

  before(async () => {
    world = await startOrchestration({
      runners: 'spawn',
      saga: { startTimeoutMs: 4_000, silenceTimeoutMs: 2_000 },
    });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  test('a run succeeds', async () => {
    const run = await m.pendingRun('echo spawned');
    const result = await m.result((await m.provision(run)).body.workflow_id);
    assert.equal(result.state, 'succeeded');
  });

  test('an instance that dies before the run starts fails provision_failed', async () => {
    const run = await m.pendingRun('true', { NODE_OPTIONS: '--require=/nonexistent/preload.js' });
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'provision_failed']);
    assert.match((await m.getRun(run)).failure_message, /exited before the run started/);
  });

  test('no start before the timeout: the instance is terminated and the run fails provision_failed', async () => {
    // The runner's Node waits a minute before it even loads: the instance lives, the run never starts.
    const run = await m.pendingRun('true', {
      NODE_OPTIONS: `--import=${path.join(import.meta.dirname, '../fixtures/stall-startup.mjs')}`,
    });
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'provision_failed']);
    assert.match((await m.getRun(run)).failure_message, /did not start within 4 s/);
    await recordHistory(world.env, provisioned.body.workflow_id, 'managed-run-no-start');
    assert.equal(await world.provider.describe(provisioned.body.workflow_id), undefined);
    // The runner never got to trade its exchange token, so no worker key ever existed.
    assert.deepEqual(await m.workerKeys(run), { total: 0, revoked: 0 });
  });
});

describe('long managed runs', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;

  before(async () => {
    // One-second watch slices and one slice per execution: a 4 s run continues as new a few times.
    world = await startOrchestration({ saga: { watchSliceMs: 1_000, slicesPerExecution: 1 } });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  test('a run longer than a watch slice continues as new and still concludes; each execution stays a handful of events', async () => {
    const run = await m.pendingRun('sleep 4');
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.equal(result.state, 'succeeded');
    const executions = [];
    for await (const execution of world.env.client.workflow.list({
      query: `WorkflowId = '${provisioned.body.workflow_id}'`,
    }))
      executions.push(execution);
    assert.ok(executions.length >= 3, `continued as new: ${executions.length} executions`);
    const last = await world.env.client.workflow.getHandle(provisioned.body.workflow_id).fetchHistory();
    assert.ok(last.events!.length < 40, `the last execution has ${last.events!.length} events`);
  });
});

describe('the service signal drives the saga', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;

  before(async () => {
    // Polls every ten minutes: within the test, only the service's signals can move the saga on.
    world = await startOrchestration({ saga: { pollMs: 600_000 } });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  test('a run that ends is concluded on the signal: the watch activity is cancelled, not waited out, and the history stays within 50 events', async () => {
    const run = await m.pendingRun('sleep 3');
    const provisioned = await m.provision(run);
    const result = await m.result(provisioned.body.workflow_id);
    assert.equal(result.state, 'succeeded');
    const history = await world.env.client.workflow.getHandle(provisioned.body.workflow_id).fetchHistory();
    const events = history.events!;
    const watch = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'watchRun',
    );
    assert.ok(watch, 'the run was watched');
    assert.ok(
      events.some(
        (e) =>
          e.activityTaskCancelRequestedEventAttributes &&
          String(e.activityTaskCancelRequestedEventAttributes.scheduledEventId) === String(watch.eventId),
      ),
      'the watch was cancelled when the signal said the run ended',
    );
    assert.ok(events.length <= 50, `the history has ${events.length} events`);
    assert.equal(
      (await world.env.client.workflow.getHandle(provisioned.body.workflow_id).describe()).memo
        ?.experimentName,
      'managed',
    );
  });
});

describe('a Temporal namespace without Assay search attributes', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;

  before(async () => {
    world = await startOrchestration({ env: await startTemporal({ searchAttributes: false }) });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    const env = world?.env;
    await world?.close();
    await env?.teardown();
  });

  test('managed runs still start and conclude, labelled by the memo alone', async () => {
    const run = await m.pendingRun('true');
    const provisioned = await m.provision(run);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    assert.equal((await m.result(provisioned.body.workflow_id)).state, 'succeeded');
    const description = await world.env.client.workflow.getHandle(provisioned.body.workflow_id).describe();
    assert.deepEqual(description.memo, { experimentName: 'managed' });
    assert.equal(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.experimentId), undefined);
  });
});
