// The watch activity against the real service and a scripted compute provider: a status check that fails,
// however often, is never a lost instance; the provider's own word is (`preempted` at once, gone twice).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { createActivities } from '../../activities/index.ts';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import type { ComputeProvider, InstanceInfo } from '../../src/compute/compute-provider.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import type { WatchOutcome } from '../../workflows/saga-types.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { workerKeyThroughExchange } from '../support/worker-key-exchange.ts';

/** What describe does on each call, in order; the last step repeats. */
type Step = 'throw' | 'gone' | InstanceInfo['state'];

/** `beforeLast` runs once, before the last step is first answered. */
function scriptedProvider(steps: Step[], beforeLast: () => Promise<void>) {
  let calls = 0;
  const provider: ComputeProvider = {
    kind: 'ec2',
    checkLaunch: () => undefined,
    provision: () => Promise.reject(new Error('not in this test')),
    terminate: () => Promise.resolve(),
    async describe() {
      calls++;
      if (calls === steps.length) await beforeLast();
      const step = steps[Math.min(calls, steps.length) - 1]!;
      if (step === 'throw') throw new Error('DescribeInstances: 503 Service Unavailable');
      if (step === 'gone') return undefined;
      return { provider: 'ec2', instanceId: 'i-0123456789abcdef0', state: step };
    },
  };
  return { provider, calls: () => calls };
}

describe('watchRun and failed status checks', () => {
  let t: TestService;
  let orchestratorKey: string;

  before(async () => {
    t = await startTestService({ listen: true, orchestrator: new FakeOrchestrator() });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
  });
  after(() => t?.close());

  /** A managed run its (simulated) runner has started. */
  async function runningRun() {
    const api = t.as(t.adminKey);
    const experiment = await api.post('/experiments', { name: 'watch', organization_id: 'personal' });
    const id = experiment.body.id as string;
    const config_yaml = stringify({ launch: { command: 'python train.py' } });
    assert.equal((await api.post(`/experiments/${id}/variations`, { config_yaml })).status, 201);
    assert.equal((await api.post(`/experiments/${id}/commit`)).status, 200);
    const run = await api.post(`/experiments/${id}/variations/1/runs`);
    const runPath = `/experiments/${id}/variations/1/runs/${run.body.r}`;
    const provisioned = await api.post(`${runPath}/provision`);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    const worker = t.as((await workerKeyThroughExchange(t, orchestratorKey, run.body.id)).key);
    assert.equal((await worker.get(`${runPath}/config`)).status, 200);
    const started = await worker.post(`${runPath}/start`, { environment: { runner: 'simulated' } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    return {
      runId: run.body.id as string,
      workflowId: provisioned.body.workflow_id as string,
      succeed: async () => assert.equal((await worker.post(`${runPath}/succeed`)).status, 200),
    };
  }

  /**
   * One watch slice (a minute) over the scripted answers. With `endAtLast`, the runner ends the run just
   * before the last answer: a watch that got that far without a loss then sees the run `ended`.
   */
  async function watch(steps: Step[], endAtLast: boolean) {
    const { runId, workflowId, succeed } = await runningRun();
    const scripted = scriptedProvider(steps, endAtLast ? succeed : async () => undefined);
    const activities = createActivities({
      api: new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 }),
      provider: scripted.provider,
      runnerServerUrl: t.url!,
    });
    const outcome = (await new MockActivityEnvironment().run(activities.watchRun, {
      runId,
      workflowId,
      silenceTimeoutMs: 3_600_000,
      pollMs: 10,
      sliceMs: 60_000,
    })) as WatchOutcome;
    return { outcome, calls: scripted.calls() };
  }

  const ended = { kind: 'ended', state: 'succeeded', failureReason: null };

  it('25 failed status checks in a row, then running: no loss, the watch goes on until the run ends', async () => {
    const steps: Step[] = [...Array<Step>(25).fill('throw'), 'running', 'running'];
    assert.deepEqual(await watch(steps, true), { outcome: ended, calls: steps.length });
  });

  it('failed checks between gone answers and alive ones never add up to a loss', async () => {
    const steps: Step[] = ['gone', 'throw', 'running', 'gone', 'throw', 'throw', 'running', 'throw', 'throw'];
    assert.deepEqual(await watch(steps, true), { outcome: ended, calls: steps.length });
  });

  it('nothing but failed checks, 40 of them: still no loss', async () => {
    const steps = Array<Step>(40).fill('throw');
    assert.deepEqual(await watch(steps, true), { outcome: ended, calls: steps.length });
  });

  it("the provider's word: preempted ends the watch at once, gone twice in a row is a crash", async () => {
    assert.deepEqual(await watch(['running', 'throw', 'preempted'], false), {
      outcome: { kind: 'instance_lost', cause: 'preempted' },
      calls: 3,
    });
    assert.deepEqual(await watch(['running', 'gone', 'gone'], false), {
      outcome: { kind: 'instance_lost', cause: 'crash' },
      calls: 3,
    });
  });
});
