import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SweepRun } from '@assay/contract';
import { objectivePoints, outcomeOf, retriedRuns } from '../../../src/web/ui/sweep-trials.ts';

const run = (p: Partial<SweepRun> & Pick<SweepRun, 'n' | 'r' | 'trial'>): SweepRun => ({
  variation_name: `v${p.n}`,
  workflow_id: `run-${p.n}-${p.r}`,
  state: 'succeeded',
  failure_reason: null,
  params: {},
  objective: null,
  step: null,
  retries_run_id: null,
  ...p,
});

describe('a sweep’s runs as outcomes', () => {
  const crashed = run({ n: 2, r: 1, trial: 2, state: 'failed', failure_reason: 'crash', objective: 0.1 });
  const runs = [
    run({ n: 1, r: 1, trial: 1, objective: 0.5 }),
    crashed,
    run({ n: 2, r: 2, trial: 2, objective: 0.3 }),
    run({ n: 3, r: 1, trial: 3, state: 'failed', failure_reason: 'stopped_early', objective: 0.9 }),
    run({ n: 4, r: 1, trial: 4, state: 'failed', failure_reason: 'crash', objective: 0.05 }),
    run({ n: 5, r: 1, trial: 5, objective: 0.4 }),
    run({ n: 6, r: 1, trial: 6, state: 'running', objective: 0.01 }),
  ];

  it('names a run taken over by a later run of its trial retried, and a stopped one stopped early', () => {
    const retried = retriedRuns(runs);
    assert.deepEqual(
      runs.map((r) => outcomeOf(r, retried)),
      ['succeeded', 'retried', 'succeeded', 'stopped_early', 'failed', 'succeeded', 'running'],
    );
    assert.ok(retried.has(crashed));
  });

  it('repeats of a grid run (no trial) are not retries', () => {
    const repeats = [run({ n: 1, r: 1, trial: null, state: 'failed' }), run({ n: 1, r: 2, trial: null })];
    assert.equal(retriedRuns(repeats).size, 0);
  });

  it('plots finished and stopped trials apart, the best so far from the finished ones only', () => {
    assert.deepEqual(objectivePoints(runs, 'minimize'), {
      trials: [1, 2, 3, 5],
      finished: [0.5, 0.3, null, 0.4],
      stopped: [null, null, 0.9, null],
      bestSoFar: [0.5, 0.3, 0.3, 0.3],
    });
    assert.deepEqual(objectivePoints(runs, 'maximize').bestSoFar, [0.5, 0.5, 0.5, 0.5]);
  });
});
