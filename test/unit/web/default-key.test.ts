import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chartOrder, defaultMetricKey } from '../../../src/web/ui/default-key.ts';

describe('the default metric key', () => {
  const keys = ['accuracy', 'loss', 'system/cpu_percent', 'system/gpu0/utilization_percent', 'val/loss'];
  it('is the objective when logged, else the first training key, never a system key before one', () => {
    assert.equal(defaultMetricKey(keys, 'val/loss'), 'val/loss');
    assert.equal(defaultMetricKey(keys, 'missing'), 'accuracy');
    assert.equal(defaultMetricKey(['system/rss_mb', 'z'], null), 'z');
    assert.equal(defaultMetricKey(['system/rss_mb'], null), 'system/rss_mb');
    assert.equal(defaultMetricKey([], 'loss'), undefined);
  });
  it('orders keys for charts: the default, the training keys, then the system keys', () => {
    assert.deepEqual(
      chartOrder(['system/cpu_percent', 'accuracy', 'loss', 'val/loss'], (k) => k, 'val/loss'),
      ['val/loss', 'accuracy', 'loss', 'system/cpu_percent'],
    );
  });
});
