// Early stopping through HTTP: sweep runs log their objective at POST …/metrics with their worker keys (as a
// runner does, whatever the program logs through: file, client, SDK); the sweep's pruner stops a bad one
// (cancel requested with reason stopped_early, its workflow told), which then ends failed/stopped_early
// whether its runner reports `abandoned` or the saga does after the grace; a good run is never stopped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EarlyStopping } from '@assay/contract';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { addVariation, createExperiment, createRun } from '../support/fixtures.ts';
import {
  optunaDecisions,
  orderOf,
  scenarioOf,
  settingsOf,
  type Decision,
} from '../support/optuna-scenarios.ts';
import { prng, seedFrom } from '../support/prng.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { sweepWithStopping, type SweepRunRef } from '../support/stopping-sweeps.ts';
import { workerKeyThroughExchange } from '../support/worker-key-exchange.ts';

interface SweepRun extends SweepRunRef {
  /** The run's worker key, once started. */
  key: string;
}

for (const pglite of [false, true]) {
  describe(`early stopping of sweep runs (${pglite ? 'PGlite' : 'PostgreSQL'})`, () => {
    let t: TestService;
    let fake: FakeOrchestrator;
    let owner: { id: string; key: string };
    const orchestratorKey = generateOrchestratorKey();

    before(async () => {
      fake = new FakeOrchestrator();
      t = await startTestService({
        pglite,
        orchestrator: fake,
        env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
      });
      owner = await t.createUser();
    });
    after(() => t.close());

    const sweep = async (stopping: EarlyStopping | null, trials: number) =>
      (await sweepWithStopping(t, owner, stopping, trials)).runs;

    /** The runner's start: its worker key, its config read, the run started. */
    async function start(run: SweepRunRef): Promise<SweepRun> {
      const { key } = await workerKeyThroughExchange(t, orchestratorKey, run.id);
      assert.equal((await t.as(key).get(`${run.path}/config`)).status, 200);
      const started = await t.as(key).post(`${run.path}/start`, { environment: {} });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      return { ...run, key };
    }

    async function log(run: SweepRun, points: [step: number, value: number | string][], key = 'val_loss') {
      const res = await t
        .as(run.key)
        .post(`${run.path}/metrics`, { metrics: points.map(([step, value]) => ({ key, step, value })) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }

    const read = async (run: SweepRun) => (await t.as(owner.key).get(run.path)).body;
    const stopAsked = (run: { cancel_requested: boolean; cancel_reason: string | null }) => [
      run.cancel_requested,
      run.cancel_reason,
    ];
    /** How many times the run's workflow was told of a change (its start is one). */
    const notices = (run: SweepRun) =>
      fake.callsOf<string>('notifyRunChanged').filter((id) => id === run.workflowId).length;

    it('asha stops a run whose objective falls behind at a rung, and it ends failed/stopped_early when its runner reports abandoned', async () => {
      const [good, bad, better, broken] = await Promise.all(
        (await sweep({ kind: 'asha', min_step: 1, reduction_factor: 2 }, 4)).map(start),
      );
      // The first at each rung is promoted: 1, 2 and 4 are rungs, none is passed by a worse value.
      await log(good!, [[0, 1.2]]);
      await log(good!, [[1, 1.0]]);
      await log(good!, [
        [2, 0.9],
        [3, 0.8],
      ]);
      await log(good!, [[4, 0.7]]);
      const told = { good: notices(good!), bad: notices(bad!) };
      // Another key, however bad, asks nothing.
      await log(bad!, [[1, 1e9]], 'train_loss');
      assert.deepEqual(stopAsked(await read(bad!)), [false, null]);
      // 2.0 at rung 0 against 1.0: not in the better half.
      await log(bad!, [[1, 2.0]]);
      const stopped = await read(bad!);
      assert.deepEqual([stopped.state, ...stopAsked(stopped)], ['running', true, 'stopped_early']);
      assert.equal(notices(bad!), told.bad + 1, 'the stopped run’s workflow is told');
      const beat = await t.as(bad!.key).post(`${bad!.path}/heartbeat`);
      assert.deepEqual([beat.status, beat.body.cancel_requested], [200, true]);
      // Its late points are still taken; nothing more is decided about it.
      await log(bad!, [[2, 3.0]]);
      const failed = await t
        .as(bad!.key)
        .post(`${bad!.path}/fail`, { reason: 'abandoned', message: 'SIGTERM' });
      assert.equal(failed.status, 200, JSON.stringify(failed.body));
      assert.deepEqual([failed.body.state, failed.body.failure_reason], ['failed', 'stopped_early']);

      // 0.5 at rung 0 among 1.0 and 2.0 is the best: promoted, as at rung 1 (0.4 against 0.9).
      await log(better!, [[1, 0.5]]);
      await log(better!, [[2, 0.4]]);
      assert.deepEqual(stopAsked(await read(better!)), [false, null]);
      // A NaN at a rung is pruned, as Optuna prunes it.
      await log(broken!, [[1, 'NaN']]);
      assert.deepEqual(stopAsked(await read(broken!)), [true, 'stopped_early']);

      // The good run was never stopped, and ends as it reports.
      assert.deepEqual(stopAsked(await read(good!)), [false, null]);
      assert.equal(notices(good!), told.good);
      const done = await t.as(good!.key).post(`${good!.path}/succeed`);
      assert.deepEqual([done.status, done.body.state, done.body.failure_reason], [200, 'succeeded', null]);
    });

    it('a run stopped early that the saga fails abandoned after the grace reads stopped_early; other abandoned runs stay abandoned', async () => {
      const [first, second, cancelled] = await Promise.all(
        (await sweep({ kind: 'hyperband', min_step: 1, max_step: 1, reduction_factor: 2 }, 3)).map(start),
      );
      await log(first!, [[1, 1.0]]);
      await log(second!, [[1, 5.0]]);
      assert.deepEqual(stopAsked(await read(second!)), [true, 'stopped_early']);
      const orch = t.as(orchestratorKey);
      const failed = await orch.post(`/orchestrator/runs/${second!.id}/fail`, {
        reason: 'abandoned',
        message: 'cancelled; the runner did not stop within 30 s',
      });
      assert.deepEqual([failed.status, failed.body.failure_reason], [200, 'stopped_early']);

      // A person's cancel is no early stop: its run ends abandoned, by the runner or by the saga.
      assert.equal((await t.as(owner.key).post(`${cancelled!.path}/cancel`)).status, 200);
      const byRunner = await t.as(cancelled!.key).post(`${cancelled!.path}/fail`, { reason: 'abandoned' });
      assert.deepEqual([byRunner.body.state, byRunner.body.failure_reason], ['failed', 'abandoned']);
      const fails = await orch.post(`/orchestrator/runs/${first!.id}/fail`, { reason: 'abandoned' });
      assert.deepEqual([fails.status, fails.body.failure_reason], [200, 'abandoned']);
      // Another reason is kept for a stopped run too (a crash while it stopped is a crash).
      const [leader, crashed] = await Promise.all(
        (await sweep({ kind: 'asha', min_step: 1, reduction_factor: 2 }, 2)).map(start),
      );
      await log(leader!, [[1, 1.0]]);
      await log(crashed!, [[1, 9.0]]);
      assert.deepEqual(stopAsked(await read(crashed!)), [true, 'stopped_early']);
      const crash = await t.as(crashed!.key).post(`${crashed!.path}/fail`, { reason: 'crash' });
      assert.deepEqual([crash.body.state, crash.body.failure_reason], ['failed', 'crash']);
    });

    it('median stops a run whose best value is worse than the finished runs’ median at its step', async () => {
      const [done, good, bad] = await Promise.all(
        (await sweep({ kind: 'median', startup_trials: 1 }, 3)).map(start),
      );
      // No finished run yet: nothing to compare with.
      await log(bad!, [[0, 9.0]]);
      assert.deepEqual(stopAsked(await read(bad!)), [false, null]);
      await log(done!, [
        [0, 1.0],
        [1, 1.0],
        [2, 1.0],
      ]);
      assert.equal((await t.as(done!.key).post(`${done!.path}/succeed`)).status, 200);
      // Its best so far (0.5) is what counts, not its latest (3.0).
      await log(good!, [[0, 0.5]]);
      await log(good!, [[1, 3.0]]);
      assert.deepEqual(stopAsked(await read(good!)), [false, null]);
      await log(bad!, [[1, 2.0]]);
      assert.deepEqual(stopAsked(await read(bad!)), [true, 'stopped_early']);
    });

    it('decides as Optuna on random scenarios replayed through the metrics endpoint', async () => {
      const seed = seedFrom('EARLY_STOP_SEED');
      const rng = prng(seed);
      // Small scenarios (each report is a request): 6 trials at most, 12 reports each, 2 at a time.
      const scenarios = (['asha', 'hyperband', 'median'] as const).flatMap((kind) =>
        [0, 1].map(() => {
          const settings = settingsOf(rng, kind);
          const full = scenarioOf(
            rng,
            kind,
            kind === 'median' ? { ...settings, startup_trials: 1 } : settings,
          );
          const trials = full.trials.slice(0, 6).map((p) => ({ ...p, reports: p.reports.slice(0, 12) }));
          return { ...full, trials, order: orderOf(rng, trials, 2) };
        }),
      );
      const sweeps = [];
      for (const s of scenarios) {
        const stopping = { kind: s.kind, ...s.settings } as EarlyStopping;
        const made = await sweepWithStopping(t, owner, stopping, s.trials.length, s.goal);
        // Optuna's study name is the sweep's id; a list sweep's trial numbers are its runs' positions.
        s.study_name = made.sweepId;
        sweeps.push(await Promise.all(made.runs.map(start)));
      }
      const reference = optunaDecisions(scenarios).decisions;
      let compared = 0;
      let pruned = 0;
      for (const [k, s] of scenarios.entries()) {
        const runs = sweeps[k]!;
        const reported = s.trials.map(() => 0);
        const over = s.trials.map(() => false);
        const decisions: Decision[] = [];
        for (const i of s.order) {
          if (over[i]) continue;
          const [step, value] = s.trials[i]!.reports[reported[i]!++]!;
          await log(runs[i]!, [[step, value]]);
          const stopped = (await read(runs[i]!)).cancel_requested as boolean;
          decisions.push([i, step, stopped]);
          if (stopped) {
            over[i] = true;
            await t.as(runs[i]!.key).post(`${runs[i]!.path}/fail`, { reason: 'abandoned' });
          } else if (reported[i] === s.trials[i]!.reports.length) {
            over[i] = true;
            if (s.trials[i]!.finishes) await t.as(runs[i]!.key).post(`${runs[i]!.path}/succeed`);
          }
        }
        assert.deepEqual(
          decisions,
          reference[k],
          `seed ${seed}, scenario ${k} (${s.kind} ${JSON.stringify(s.settings)})`,
        );
        compared += decisions.length;
        pruned += decisions.filter((d) => d[2]).length;
      }
      assert.ok(compared > 50 && pruned > 0, `${compared} decisions, ${pruned} pruned`);
      console.log(
        `seed ${seed}: ${compared} decisions through HTTP equal Optuna's, ${pruned} of them pruned`,
      );
    });

    it('runs outside a sweep, and sweeps without early stopping, are never stopped', async () => {
      const experiment = await createExperiment(t, owner.key, { name: 'plain' });
      await addVariation(t, owner.key, experiment.id);
      assert.equal((await t.as(owner.key).post(`/experiments/${experiment.id}/commit`)).status, 200);
      const plain = await createRun(t, owner.key, experiment.id);
      assert.equal((await t.as(owner.key).get(`${plain.path}/config`)).status, 200);
      assert.equal((await t.as(owner.key).post(`${plain.path}/start`, {})).status, 200);
      for (const value of [1, 'NaN', 1e9]) {
        const res = await t
          .as(owner.key)
          .post(`${plain.path}/metrics`, { metrics: [{ key: 'val_loss', step: 1, value }] });
        assert.equal(res.status, 200);
      }
      assert.equal((await t.as(owner.key).get(plain.path)).body.cancel_requested, false);
      const [leader, behind] = await Promise.all((await sweep(null, 2)).map(start));
      await log(leader!, [[1, 1.0]]);
      await log(behind!, [[1, 9.0]]);
      assert.deepEqual(stopAsked(await read(behind!)), [false, null]);
    });
  });
}
