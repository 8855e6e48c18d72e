import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allPaths,
  capPaths,
  compareCells,
  differingPaths,
  flatten,
  MAX_METRICS_JSON_COLUMNS,
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
