import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CurveCache } from '../../../src/server/metrics/curve-cache.ts';

const curve = (n: number) => ({
  count: n,
  downsampled: false,
  points: Array.from({ length: n }, (_, step) => ({ step, value: step, ts: null })),
});

describe('CurveCache', () => {
  it('keeps curves up to its points, dropping the least recently read first', () => {
    const cache = new CurveCache(10);
    cache.set('a', curve(4));
    cache.set('b', curve(4));
    assert.equal(cache.get('a')?.count, 4); // a is now the more recently read
    cache.set('c', curve(4)); // 12 points: b goes
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual([cache.get('a')?.count, cache.get('c')?.count], [4, 4]);
    cache.set('a', curve(2)); // replacing counts the new size only
    cache.set('d', curve(4));
    assert.deepEqual([cache.size, cache.get('a')?.count, cache.get('c')?.count], [3, 2, 4]);
  });

  it('does not keep a curve larger than all it may hold', () => {
    const cache = new CurveCache(10);
    cache.set('a', curve(4));
    cache.set('big', curve(11));
    assert.deepEqual([cache.get('big'), cache.get('a')?.count], [undefined, 4]);
  });
});
