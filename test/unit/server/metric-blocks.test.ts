import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blocksFor, COARSE_BLOCKS, FINE_BLOCKS } from '../../../src/server/metrics/metric-repository.ts';

// Which candidates a downsampled read takes (src/server/metrics/metric-repository.ts): the 256-step blocks
// past the point limit, the 16-step blocks where they are no wider than a bucket and dense, else the points.
describe('blocksFor', () => {
  const limit = 50_000;
  it('reads 256-step blocks past the point limit, whatever the buckets', () => {
    assert.equal(blocksFor(1_000_000, 1_000_000, 500, limit), COARSE_BLOCKS);
    assert.equal(blocksFor(50_001, 50_001, 500, limit), COARSE_BLOCKS);
  });
  it('reads 16-step blocks for a dense series whose buckets are at least a block wide', () => {
    // 10,000 steps into 500 buckets of 20 steps: the compare page's curve of a 10,000-step run.
    assert.equal(blocksFor(10_000, 10_000, 500, limit), FINE_BLOCKS);
    assert.equal(blocksFor(50_000, 50_000, 500, limit), FINE_BLOCKS);
    assert.equal(blocksFor(8_000, 8_000, 500, limit), FINE_BLOCKS, 'buckets exactly one block wide');
  });
  it('reads the points when buckets are narrower than a block', () => {
    assert.equal(blocksFor(7_999, 7_999, 500, limit), undefined);
    assert.equal(blocksFor(3_000, 3_000, 500, limit), undefined);
  });
  it('reads the points when the blocks would hold fewer than four points on average', () => {
    // One point every 5 steps: 3.2 points per block.
    assert.equal(blocksFor(10_000, 50_000, 500, limit), undefined);
    // One every 4 steps: exactly four.
    assert.equal(blocksFor(10_000, 40_000, 500, limit), FINE_BLOCKS);
  });
});
