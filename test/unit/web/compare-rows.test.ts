import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allPaths,
  capPaths,
  compareCells,
  differingPaths,
  flatten,
  legendLabels,
  MAX_METRICS_JSON_COLUMNS,
  type Cell,
} from '../../../src/web/ui/compare-rows.ts';

describe('flatten', () => {
  it('turns nested objects into dotted paths, arrays into JSON text', () => {
    assert.deepEqual(flatten({ lr: 0.1, optimizer: { name: 'sgd', betas: [0.9, 0.99] }, tag: null }), {
      lr: 0.1,
      'optimizer.name': 'sgd',
      'optimizer.betas': '[0.9,0.99]',
      tag: null,
    });
  });
});

describe('differingPaths', () => {
  it('keeps the paths whose value is not the same everywhere, a missing one included', () => {
    const configs = [
      { lr: 0.1, seed: 1, steps: 10 },
      { lr: 0.01, seed: 1, steps: 10 },
      { lr: 0.01, seed: 1, steps: 10, warmup: 5 },
    ];
    assert.deepEqual(differingPaths(configs), ['lr', 'warmup']);
    assert.deepEqual(allPaths(configs), ['lr', 'seed', 'steps', 'warmup']);
  });
});

describe('compareCells', () => {
  it('orders numbers by value and text naturally, both ways, absent values last', () => {
    // null, not undefined: Array.prototype.sort puts undefined last without asking the comparator.
    const cells = [10, null, 2, 0.5];
    assert.deepEqual(
      [...cells].sort((a, b) => compareCells(a, b, 'ascending')),
      [0.5, 2, 10, null],
    );
    assert.deepEqual(
      [...cells].sort((a, b) => compareCells(a, b, 'descending')),
      [10, 2, 0.5, null],
    );
    assert.equal(compareCells(undefined, 1, 'descending'), 1);
    const runs = ['10.1', '2.1', '1.1'];
    assert.deepEqual(
      runs.sort((a, b) => compareCells(a, b, 'ascending')),
      ['1.1', '2.1', '10.1'],
    );
  });
});

describe('capPaths', () => {
  it("keeps the first MAX_METRICS_JSON_COLUMNS of a metrics.json's paths and counts them all", () => {
    const paths = allPaths([
      Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`f${String(i).padStart(3, '0')}`, i])),
    ]);
    const capped = capPaths(paths);
    assert.equal(MAX_METRICS_JSON_COLUMNS, 50);
    assert.deepEqual([capped.shown.length, capped.shown[49], capped.total], [50, 'f049', 120]);
    assert.deepEqual(capPaths(['a', 'b']), { shown: ['a', 'b'], total: 2 });
  });
});

describe('legendLabels', () => {
  const run = (
    id: string,
    n: number,
    r: number,
    config: Record<string, Cell>,
    name: string | null = null,
  ) => ({
    id,
    n,
    r,
    name,
    config,
  });
  it('names each run by its differing config values, and tells runs of one variation apart', () => {
    const labels = legendLabels(
      [
        run('a', 1, 1, { lr: 0.01, depth: 3, seed: 1 }),
        run('b', 2, 1, { lr: 0.1, depth: 3, seed: 1 }),
        run('c', 2, 2, { lr: 0.1, depth: 3, seed: 1 }, 'rerun'),
      ],
      ['lr'],
    );
    assert.deepEqual([...labels.values()], ['lr=0.01', 'lr=0.1 (run 2.1)', 'lr=0.1 (rerun)']);
  });

  it('falls back to the run name or number, and shortens long lists', () => {
    assert.deepEqual(
      [...legendLabels([run('a', 1, 1, {}), run('b', 1, 2, {}, 'b')], []).values()],
      ['run 1.1', 'b'],
    );
    const config = { a: 1, b: 2, c: 3, d: 4, e: 1 / 3 };
    assert.deepEqual(
      [...legendLabels([run('x', 1, 1, config)], ['a', 'b', 'c', 'd', 'e']).values()],
      ['a=1, b=2, c=3, d=4, …'],
    );
    assert.deepEqual([...legendLabels([run('x', 1, 1, config)], ['e']).values()], ['e=0.333333']);
  });
});
