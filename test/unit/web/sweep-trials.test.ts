import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SweepDeclaration, SweepRun } from '@assay/contract';
import { objectivePoints, trialRuns } from '../../../src/web/ui/sweep-trials.ts';

const run = (p: Partial<SweepRun> & Pick<SweepRun, 'n' | 'r'>): SweepRun => ({
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
const declared = (d: Partial<SweepDeclaration>): SweepDeclaration => ({
  strategy: 'random',
  trials: 6,
  objective: { metric: 'val_loss', goal: 'minimize' },
  early_stopping: null,
  max_retries: 1,
  seed: 7,
  ...d,
});

describe('a sweep’s runs as trials and outcomes', () => {
  const runs = [
    run({ n: 1, r: 1, objective: 0.5 }),
    run({ n: 2, r: 1, state: 'failed', failure_reason: 'crash', objective: 0.1 }),
    run({ n: 2, r: 2, objective: 0.3 }),
    run({ n: 3, r: 1, state: 'failed', failure_reason: 'stopped_early', objective: 0.9 }),
    run({ n: 4, r: 1, state: 'failed', failure_reason: 'crash', objective: 0.05 }),
    run({ n: 5, r: 1, objective: 0.4 }),
    run({ n: 6, r: 1, state: 'running', objective: 0.01 }),
  ];
  const trials = trialRuns({ runs, declaration: declared({}) });

  it('names a run a later run of its trial took over retried, and a stopped one stopped early', () => {
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

  it('calls no run retried in a sweep that does not retry (a repeat’s runs of one variation)', () => {
    const repeats = [
      run({ n: 7, r: 1, trial: null, state: 'failed', failure_reason: 'crash' }),
      run({ n: 7, r: 2, trial: null }),
    ];
    const outcomes = trialRuns({
      runs: repeats,
      declaration: declared({ strategy: 'repeat', max_retries: 0 }),
    });
    assert.deepEqual(
      outcomes.map((t) => [t.trial, t.outcome]),
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
    const numbered = trialRuns({ runs: listed, declaration: declared({ strategy: 'list', max_retries: 0 }) });
    assert.deepEqual(
      numbered.map((t) => t.trial),
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
