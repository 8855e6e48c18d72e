// Sweeps on a real Temporal dev server: variations from a grid, managed runs as children,
// bounded concurrency.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { eventually } from '../support/bounded-waits.ts';
import { recordHistory, startOrchestration, type Orchestration } from '../support/orchestration.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/definitions.ts';
import { isTerminalRunState } from '@assay/contract';
import { managedRunWorld } from '../support/managed-runs.ts';

/**
 * Polls how many instances are alive at once while their runs are not over, until stopped; returns the
 * largest count seen. A sweep starts its next run once a run has ended (workflows/trial-sweep.ts), while
 * the ended run's runner may still be exiting: `over` says which instance's run has ended.
 */
function watchConcurrency(world: Orchestration, over: (workflowId: string) => Promise<boolean>) {
  let max = 0;
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const keys = Object.keys(
        JSON.parse(
          await import('node:fs/promises')
            .then((fs) => fs.readFile(`${world.stateDir}/local-instances.json`, 'utf8'))
            .catch(() => '{}'),
        ),
      );
      let alive = 0;
      for (const key of keys) if ((await world.provider.describe(key)) && !(await over(key))) alive += 1;
      max = Math.max(max, alive);
      samples += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { max, samples };
    },
  };
}

describe('sweeps', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;
  let key: string;

  before(async () => {
    world = await startOrchestration();
    await world.startWorker();
    m = managedRunWorld(world);
    key = (await m.user()).key;
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  async function draftExperiment() {
    const res = await world.svc.as(key).post('/experiments', { name: 'sweep', organization_id: 'personal' });
    assert.equal(res.status, 201);
    return res.body.id as string;
  }

  test('a 3×3 grid at concurrency 2 ends with 9 succeeded runs, never more than 2 unfinished runs on instances at once', async () => {
    const experimentId = await draftExperiment();
    const base = stringify({
      lr: 0.1,
      batch: 32,
      launch: {
        command: 'mkdir -p outputs && echo "$ASSAY_CONFIG_FILE" > outputs/config-path.txt && sleep 0.5',
      },
    });
    let runs: { n: number; r: number; workflow_id: string }[] = [];
    const concurrency = watchConcurrency(world, async (workflowId) => {
      const run = runs.find((r) => r.workflow_id === workflowId);
      if (!run) return false;
      const { body } = await world.svc
        .as(key)
        .get(`/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`);
      return isTerminalRunState(body.state);
    });
    const created = await world.svc.as(key).post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: base,
      grid: { lr: [0.1, 0.01, 0.001], batch: [16, 32, 64] },
      concurrency: 2,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal(created.body.runs.length, 9);
    runs = created.body.runs;

    // Progress is queryable while it runs.
    let progress;
    for (let i = 0; i < 100; i++) {
      progress = (await world.svc.as(key).get(`/experiments/${experimentId}/sweeps/${created.body.id}`)).body
        .progress;
      if (progress && progress.running > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(progress, 'progress answered');
    assert.equal(progress.total, 9);
    assert.ok(progress.running <= 2, JSON.stringify(progress));

    const summary = await world.env.client.workflow.getHandle(created.body.workflow_id).result();
    const seen = await concurrency.stop();
    assert.deepEqual(summary, { total: 9, pending: 0, running: 0, succeeded: 9, failed: 0, done: true });
    assert.equal(
      seen.max,
      2,
      `at most 2 instances of unfinished runs at once, and the bound was used (${seen.samples} samples)`,
    );
    assert.equal(await world.instancesStarted(), 9);
    // Each run freed its slot as it ended, before its saga concluded (workflows/trial-sweep.ts).
    const events = (await world.env.client.workflow.getHandle(created.body.workflow_id).fetchHistory())
      .events!;
    assert.equal(
      events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'runEnded').length,
      9,
      'one runEnded signal per run',
    );

    const detail = (await world.svc.as(key).get(`/experiments/${experimentId}`)).body;
    assert.equal(detail.state, 'committed');
    const variations = (await world.svc.as(key).get(`/experiments/${experimentId}/variations`)).body.items;
    assert.deepEqual(
      variations.map((v: any) => [v.config_json.lr, v.config_json.batch]).sort(),
      [0.1, 0.01, 0.001].flatMap((lr) => [16, 32, 64].map((batch) => [lr, batch])).sort(),
    );
    for (const run of created.body.runs) {
      const state = (
        await world.svc.as(key).get(`/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`)
      ).body;
      assert.equal(state.state, 'succeeded', JSON.stringify(state));
      assert.equal(state.workflow_id, run.workflow_id);
    }
    const after = (await world.svc.as(key).get(`/experiments/${experimentId}/sweeps/${created.body.id}`))
      .body;
    assert.deepEqual(after.progress, { ...summary, stopped_early: 0, retried: 0, failed_by_reason: {} });
    await recordHistory(world.env, created.body.workflow_id, 'trial-sweep-3x3');
    // A run of a sweep signals it (runEnded) as it ends: its history has a step that a lone run's has not.
    await recordHistory(world.env, created.body.runs[0].workflow_id, 'managed-run-in-trial-sweep');
  });

  test('cancelling a sweep cancels its running runs and ends the ones not started', async () => {
    const experimentId = await draftExperiment();
    const base = stringify({ lr: 0.1, launch: { command: 'sleep 60' } });
    const created = await world.svc.as(key).post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: base,
      list: [{ lr: 1 }, { lr: 2 }, { lr: 3 }, { lr: 4 }],
      concurrency: 2,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const [first] = created.body.runs;
    await m.waitForState({ id: '', experimentId, n: first.n, r: first.r }, 'running');
    const cancelled = await world.svc
      .as(key)
      .post(`/experiments/${experimentId}/sweeps/${created.body.id}/cancel`);
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
    await assert.rejects(world.env.client.workflow.getHandle(created.body.workflow_id).result(), /cancel/i);
    for (const run of created.body.runs) {
      const state = (
        await world.svc.as(key).get(`/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`)
      ).body;
      assert.deepEqual([state.state, state.failure_reason], ['failed', 'abandoned'], JSON.stringify(state));
    }
    assert.ok((await world.instancesStarted()) <= 9 + 2, 'at most the two running runs had instances');
    await recordHistory(world.env, created.body.workflow_id, 'trial-sweep-cancelled');
  });

  test("every run of a sweep is one visibility query away (AssaySweepId), labelled with the experiment's name", async () => {
    const experimentId = await draftExperiment();
    const created = await world.svc.as(key).post(`/experiments/${experimentId}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: { command: 'true' } }),
      list: [{ lr: 1 }, { lr: 2 }, { lr: 3 }],
      concurrency: 3,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    await world.env.client.workflow.getHandle(created.body.workflow_id).result();

    const query = `AssaySweepId = '${created.body.id}' AND WorkflowType = 'managedRun'`;
    const listed = async () => {
      const found = [];
      for await (const execution of world.env.client.workflow.list({ query })) found.push(execution);
      return found;
    };
    // Visibility is written after the workflows close, a moment later.
    await eventually(async () => (await listed()).length === 3, 30_000, 'the runs in visibility');
    const runs = await listed();
    assert.deepEqual(
      runs.map((r) => r.workflowId).sort(),
      created.body.runs.map((r: any) => r.workflow_id).sort(),
    );
    for (const run of runs) {
      assert.deepEqual(run.memo, { experimentName: 'sweep' });
      assert.equal(run.typedSearchAttributes.get(SEARCH_ATTRIBUTES.experimentId), experimentId);
      const ours = created.body.runs.find((r: any) => r.workflow_id === run.workflowId);
      assert.deepEqual(
        [
          run.typedSearchAttributes.get(SEARCH_ATTRIBUTES.variation),
          run.typedSearchAttributes.get(SEARCH_ATTRIBUTES.run),
        ],
        [ours.n, ours.r],
      );
      assert.equal(run.typedSearchAttributes.get(SEARCH_ATTRIBUTES.owner), (await m.user()).id);
    }
    const sweep = await world.env.client.workflow.getHandle(created.body.workflow_id).describe();
    assert.equal(sweep.typedSearchAttributes.get(SEARCH_ATTRIBUTES.sweepId), created.body.id);
    assert.deepEqual(sweep.memo, { experimentName: 'sweep' });
  });
});
