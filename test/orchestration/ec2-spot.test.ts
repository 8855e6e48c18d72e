// Managed runs on EC2 (moto) through the real saga: a spot instance EC2 takes back ends the run `preempted`
// and a recovery run resumes from the newest checkpoint, within ASSAY_RUN_MAX_RECOVERIES; an EC2 API that
// hangs or answers 503 is never taken for a lost instance; a really lost one still is (`crash`).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { stringify } from 'yaml';
import type { ManagedRunResult } from '../../workflows/saga-types.ts';
import { startEc2Orchestration, type Ec2Orchestration } from '../support/ec2-orchestration.ts';

describe('managed runs on EC2: spot preemption and status checks', () => {
  let world: Ec2Orchestration;
  let key: string;

  before(async () => {
    // One recovery: a preempted recovery run is not recovered again. One-second EC2 calls: a hanging API
    // shows up fast.
    world = await startEc2Orchestration({ saga: { maxRecoveries: 1 }, requestTimeoutMs: 1_000 });
    key = (await world.svc.createUser()).key;
  });
  after(async () => {
    try {
      if (world) {
        const page = await world.ec2.send(
          new DescribeInstancesCommand({
            Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running'] }],
          }),
        );
        const live = (page.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId);
        assert.deepEqual(live, [], 'no instance left running');
      }
    } finally {
      await world?.close();
    }
  });

  const api = () => world.svc.as(key);
  const runPath = (run: { experimentId: string; n: number; r: number }) =>
    `/experiments/${run.experimentId}/variations/${run.n}/runs/${run.r}`;

  /** A committed variation with this launch block and one provisioned run of it. */
  async function provisioned(launch: Record<string, unknown>) {
    const experiment = await api().post('/experiments', { name: 'ec2', organization_id: 'personal' });
    assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
    const experimentId = experiment.body.id as string;
    const variation = await api().post(`/experiments/${experimentId}/variations`, {
      config_yaml: stringify({ lr: 0.1, launch }),
    });
    assert.equal(variation.status, 201, JSON.stringify(variation.body));
    assert.equal((await api().post(`/experiments/${experimentId}/commit`)).status, 200);
    const created = await api().post(`/experiments/${experimentId}/variations/1/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const run = { id: created.body.id as string, experimentId, n: 1, r: created.body.r as number };
    const started = await api().post(`${runPath(run)}/provision`);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    return { run, workflowId: started.body.workflow_id as string };
  }

  const workflowOf = (run: { experimentId: string; n: number; r: number }) =>
    `run-${run.experimentId}-${run.n}-${run.r}`;
  const result = (workflowId: string): Promise<ManagedRunResult> =>
    world.env.client.workflow.getHandle(workflowId).result();
  async function runsOfVariation(experimentId: string) {
    const page = await api().get(`/experiments/${experimentId}/variations/1/runs`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return page.body.items as { r: number; recovers_run_id: string | null }[];
  }

  test('a spot instance taken back: the run fails preempted, a recovery run resumes from the newest checkpoint, and recoveries stop at ASSAY_RUN_MAX_RECOVERIES', async () => {
    const { run, workflowId } = await provisioned({ command: 'python train.py', spot: true });
    const first = await world.boot(workflowId);
    assert.equal(first.resumedFrom, null, 'a first run finds no checkpoint');

    // The launch asked EC2 for a one-time spot instance that terminates on interruption…
    const sent = world.proxy.runInstances.find((p) => p.get('ClientToken') === workflowId);
    assert.ok(sent, 'RunInstances went through the proxy');
    assert.deepEqual(
      [
        sent.get('InstanceMarketOptions.MarketType'),
        sent.get('InstanceMarketOptions.SpotOptions.SpotInstanceType'),
        sent.get('InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior'),
      ],
      ['spot', 'one-time', 'terminate'],
    );
    // …and moto, which records the market type only, made it a spot instance.
    assert.equal((await world.instancesOf(workflowId))[0]?.InstanceLifecycle, 'spot');

    await first.checkpoint('step-1');
    await first.checkpoint('step-2');
    first.vanish();
    await world.interrupt(first.instanceId);

    // The recovery run, r + 1, is provisioned on a new spot instance: it resumes from step-2.
    const recoveryRun = { experimentId: run.experimentId, n: run.n, r: run.r + 1 };
    const second = await world.boot(workflowOf(recoveryRun));
    assert.notEqual(second.instanceId, first.instanceId);
    assert.equal(second.resumedFrom, 'step-2', 'the recovery resumes from the newest checkpoint');
    assert.equal((await world.instancesOf(workflowOf(recoveryRun)))[0]?.InstanceLifecycle, 'spot');
    // Taken back too: the one recovery allowed is spent, so nothing recovers it.
    second.vanish();
    await world.interrupt(second.instanceId);

    const outcome = await result(workflowId);
    assert.deepEqual([outcome.state, outcome.failureReason], ['failed', 'preempted']);
    assert.ok(outcome.recoveredBy, JSON.stringify(outcome));
    assert.deepEqual(
      [outcome.recoveredBy.state, outcome.recoveredBy.failureReason, outcome.recoveredBy.recoveredBy],
      ['failed', 'preempted', null],
    );
    const lost = (await api().get(runPath(run))).body;
    assert.deepEqual([lost.state, lost.failure_reason], ['failed', 'preempted']);
    assert.match(lost.failure_message, /preempted/);
    const recovery = (await api().get(runPath(recoveryRun))).body;
    assert.deepEqual([recovery.state, recovery.failure_reason], ['failed', 'preempted']);
    assert.equal(recovery.recovers_run_id, run.id);
    assert.deepEqual(
      (await runsOfVariation(run.experimentId)).map((r) => r.r).sort(),
      [run.r, run.r + 1],
      'no second recovery',
    );
    // Both instances are gone for good.
    for (const id of [workflowId, workflowOf(recoveryRun)])
      assert.equal((await world.instancesOf(id))[0]?.State?.Name, 'terminated');
  });

  test('25 DescribeInstances in a row that hang past the timeout, then 25 answered 503: no recovery, the run succeeds', async () => {
    const { run, workflowId } = await provisioned({ command: 'python train.py' });
    const instance = await world.boot(workflowId);
    const sent = world.proxy.runInstances.find((p) => p.get('ClientToken') === workflowId);
    assert.equal(sent?.get('InstanceMarketOptions.MarketType'), null, 'on demand: no market options');
    assert.equal((await world.instancesOf(workflowId))[0]?.InstanceLifecycle, undefined);

    // The watch polls every 200 ms; each hanging call costs it a second (the provider's timeout).
    // A run that leaves `running` meanwhile (a false loss) fails the test at once, rather than leaving it
    // waiting for faults nobody asks for any more.
    let flapping = true;
    const steady = (async () => {
      while (flapping) {
        const state = (await api().get(runPath(run))).body.state;
        assert.equal(state, 'running', 'the run stays running while the API flaps');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const before = world.proxy.faultsServed;
    await Promise.race([steady, world.proxy.faultDescribes(25, 'hang')]);
    await Promise.race([steady, world.proxy.faultDescribes(25, '503')]);
    flapping = false;
    await steady;
    assert.equal(world.proxy.faultsServed - before, 50);
    await instance.succeed();

    const outcome = await result(workflowId);
    assert.deepEqual([outcome.state, outcome.failureReason, outcome.recoveredBy], ['succeeded', null, null]);
    assert.deepEqual(
      (await runsOfVariation(run.experimentId)).map((r) => r.r),
      [run.r],
      'no recovery run',
    );
    assert.equal((await world.instancesOf(workflowId))[0]?.State?.Name, 'terminated');
  });

  test('an instance that is really lost (terminated, no spot reason) is still recovered, as crash', async () => {
    const { run, workflowId } = await provisioned({ command: 'python train.py' });
    const first = await world.boot(workflowId);
    first.vanish();
    await world.terminate(first.instanceId);

    const recoveryRun = { experimentId: run.experimentId, n: run.n, r: run.r + 1 };
    const second = await world.boot(workflowOf(recoveryRun));
    await second.succeed();

    const outcome = await result(workflowId);
    assert.deepEqual([outcome.state, outcome.failureReason], ['failed', 'crash']);
    assert.equal(outcome.recoveredBy?.state, 'succeeded', JSON.stringify(outcome));
    assert.match((await api().get(runPath(run))).body.failure_message, /instance was lost/);
    assert.equal((await api().get(runPath(recoveryRun))).body.recovers_run_id, run.id);
  });
});
