import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SweepRun } from '@assay/contract';
import { objectivePoints, trialRuns } from '../../../src/web/ui/sweep-trials.ts';

const run = (p: Partial<SweepRun> & Pick<SweepRun, 'n' | 'r'>): SweepRun => ({
  id: `run-${p.n}-${p.r}`,
  variation_name: `v${p.n}`,
  workflow_id: `run-${p.n}-${p.r}`,
  state: 'succeeded',
  failure_reason: null,
  trial: p.n,
  params: {},
  objective: null,
  step: null,
  retries_run_id: null,
  ...p,
});

describe('a sweep’s runs as trials and outcomes', () => {
  const runs = [
    run({ n: 1, r: 1, objective: 0.5 }),
    run({ n: 2, r: 1, state: 'failed', failure_reason: 'crash', objective: 0.1 }),
    run({ n: 2, r: 2, objective: 0.3, retries_run_id: 'run-2-1' }),
    run({ n: 3, r: 1, state: 'failed', failure_reason: 'stopped_early', objective: 0.9 }),
    run({ n: 4, r: 1, state: 'failed', failure_reason: 'crash', objective: 0.05 }),
    run({ n: 5, r: 1, objective: 0.4 }),
    run({ n: 6, r: 1, state: 'running', objective: 0.01 }),
  ];
  const trials = trialRuns({ runs });

  it('names a run a later run took over retried, and a stopped one stopped early', () => {
    assert.deepEqual(
      trials.map((t) => [t.trial, t.outcome]),
      [
        [1, 'succeeded'],
        [2, 'retried'],
        [2, 'succeeded'],
        [3, 'stopped_early'],
        [4, 'failed'],
        [5, 'succeeded'],
        [6, 'running'],
      ],
    );
  });

  it('keeps a repeat’s failed run failed: a later run of its variation is a repeat, not its retry', () => {
    const repeats = [
      run({ n: 7, r: 1, trial: null, state: 'failed', failure_reason: 'crash' }),
      run({ n: 7, r: 2, trial: null }),
    ];
    assert.deepEqual(
      trialRuns({ runs: repeats }).map((t) => [t.trial, t.outcome]),
      [
        [1, 'failed'],
        [1, 'succeeded'],
      ],
    );
  });

  it('numbers a grid’s or list’s points by their variations, in order', () => {
    const listed = [
      run({ n: 4, r: 1, trial: null }),
      run({ n: 9, r: 1, trial: null }),
      run({ n: 6, r: 1, trial: null }),
    ];
    assert.deepEqual(
      trialRuns({ runs: listed }).map((t) => t.trial),
      [1, 3, 2],
    );
  });

  it('plots finished and stopped trials apart, the best so far from the finished ones only', () => {
    assert.deepEqual(objectivePoints(trials, 'minimize'), {
      trials: [1, 2, 3, 5],
      finished: [0.5, 0.3, null, 0.4],
      stopped: [null, null, 0.9, null],
      bestSoFar: [0.5, 0.3, 0.3, 0.3],
    });
    assert.deepEqual(objectivePoints(trials, 'maximize').bestSoFar, [0.5, 0.5, 0.5, 0.5]);
  });
});
