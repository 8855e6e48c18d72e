import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SearchSpace, SweepRun } from '@assay/contract';
import { sweepAxes, viridis } from '../../../src/web/ui/parallel-axes.ts';

const run = (trial: number, params: Record<string, unknown>, objective: number | null): SweepRun => ({
  id: `run-${trial}`,
  n: trial,
  r: 1,
  variation_name: `t${trial}`,
  workflow_id: `run-${trial}`,
  state: objective === null ? 'running' : 'succeeded',
  failure_reason: null,
  trial,
  params,
  objective,
  step: objective === null ? null : 10,
  retries_run_id: null,
});

describe('sweepAxes: the parallel-coordinates axes of a sweep', () => {
  const space: SearchSpace = {
    lr: { distribution: 'log_uniform', low: 1e-5, high: 1 },
    dropout: { distribution: 'uniform', low: 0, high: 0.5 },
    layers: { distribution: 'int', low: 1, high: 4 },
    optimizer: { distribution: 'choice', values: ['sgd', 'adam', 'adamw'] },
  };
  const runs = [
    run(1, { lr: 1e-3, dropout: 0.25, layers: 1, optimizer: 'adam' }, 0.5),
    run(2, { lr: 1, dropout: 0, layers: 4, optimizer: 'adamw' }, 0.25),
    run(3, { lr: 1e-5, dropout: 0.5, layers: 2, optimizer: 'sgd' }, null),
  ];
  const axes = sweepAxes(space, runs, 'val_loss');
  const axis = (label: string) => axes.find((a) => a.label === label)!;

  it('has one axis per space key in declared order, then the objective named by its metric', () => {
    assert.deepEqual(
      axes.map((a) => [a.label, a.kind, a.objective]),
      [
        ['lr', 'log', false],
        ['dropout', 'linear', false],
        ['layers', 'linear', false],
        ['optimizer', 'category', false],
        ['val_loss', 'linear', true],
      ],
    );
  });

  it('places log_uniform values on a log scale over the declared range, with ticks at the powers of ten', () => {
    const lr = axis('lr');
    assert.equal(lr.position(1e-5), 0);
    assert.equal(lr.position(1), 1);
    assert.ok(Math.abs(lr.position(1e-3)! - 0.4) < 1e-12);
    assert.equal(lr.position(0), null, 'a log axis cannot place 0');
    assert.deepEqual(
      lr.ticks.map((t) => t.label),
      ['0.00001', '0.0001', '0.001', '0.01', '0.1', '1'],
    );
  });

  it('places numbers linearly over the declared range, not the values seen', () => {
    assert.equal(axis('dropout').position(0.25), 0.5);
    assert.equal(axis('layers').position(4), 1);
    assert.equal(axis('layers').position(2), 1 / 3);
    assert.equal(axis('dropout').position('high'), null);
  });

  it('spaces a choice’s values evenly in declared order', () => {
    const o = axis('optimizer');
    assert.deepEqual(
      ['sgd', 'adam', 'adamw', 'rmsprop'].map((v) => o.position(v)),
      [0, 0.5, 1, null],
    );
    assert.deepEqual(
      o.ticks.map((t) => t.label),
      ['sgd', 'adam', 'adamw'],
    );
  });

  it('spans the objective values seen, and reads each run’s value through the axis', () => {
    const objective = axis('val_loss');
    assert.deepEqual(
      runs.map((r) => objective.position(objective.read(r))),
      [1, 0, null],
    );
    assert.equal(axis('optimizer').read(runs[1]!), 'adamw');
  });

  it('without a space (a grid or list): numbers linear over the range seen, the rest categories', () => {
    const listed = [run(1, { lr: 1, opt: 'sgd' }, null), run(2, { lr: 3, opt: { name: 'adam' } }, null)];
    const [lr, opt, ...rest] = sweepAxes(undefined, listed, undefined);
    assert.deepEqual(rest, [], 'no objective axis before any run logged one');
    assert.deepEqual([lr!.kind, lr!.position(2)], ['linear', 0.5]);
    assert.deepEqual(
      lr!.ticks.map((t) => t.label),
      ['1', '2', '3'],
      'whole numbers tick whole numbers',
    );
    assert.deepEqual(opt!.kind, 'category');
    const spread = sweepAxes(undefined, [run(1, { lr: 0.1 }, null), run(2, { lr: 1e-4 }, null)], undefined);
    assert.deepEqual([spread[0]!.kind, spread[0]!.position(1e-3)], ['log', 1 / 3], 'three decades: log');
    assert.deepEqual(
      opt!.ticks.map((t) => t.label),
      ['sgd', '{"name":"adam"}'],
    );
  });
});

describe('viridis', () => {
  it('runs from dark purple to yellow, clamped outside [0, 1]', () => {
    assert.equal(viridis(0), 'rgb(68, 1, 84)');
    assert.equal(viridis(1), 'rgb(253, 231, 37)');
    assert.equal(viridis(-3), viridis(0));
    assert.equal(viridis(0.5), 'rgb(33, 145, 140)');
  });
});
