import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGridAxes, parsePointList, parseSpace } from '../../../src/web/ui/sweep-spec.ts';

describe('parseGridAxes', () => {
  it('reads one axis per line, values as JSON where they are JSON and text otherwise', () => {
    assert.deepEqual(
      parseGridAxes('lr: 0.1, 1e-3\n\n# a comment\noptimizer.name: sgd, "adam, w"\nflags: [1, 2], true'),
      {
        lr: [0.1, 0.001],
        'optimizer.name': ['sgd', 'adam, w'],
        flags: [[1, 2], true],
      },
    );
  });

  it('names the line of an axis without a path or values, and a repeated axis', () => {
    assert.throws(() => parseGridAxes('lr: 0.1\nseed'), /line 2: write an axis/);
    assert.throws(() => parseGridAxes(': 1, 2'), /line 1: write an axis/);
    assert.throws(() => parseGridAxes('lr:'), /line 1: write an axis/);
    assert.throws(() => parseGridAxes('lr: 1\nlr: 2'), /line 2: the axis "lr" is given twice/);
    assert.throws(() => parseGridAxes('\n# nothing\n'), /at least one axis/);
    assert.throws(() => parseGridAxes('lr: 0.1\nseed: 1,,2'), /line 2: empty value/);
    assert.throws(() => parseGridAxes('lr: 0.1, 0.01,'), /line 1: empty value/);
  });
});

describe('parsePointList', () => {
  it('takes a JSON array of objects', () => {
    assert.deepEqual(parsePointList('[{"lr": 0.1}, {"lr": 0.01, "seed": 2}]'), [
      { lr: 0.1 },
      { lr: 0.01, seed: 2 },
    ]);
  });

  it('refuses what is not JSON, an empty list, and entries that are not objects', () => {
    assert.throws(() => parsePointList('[{lr: 0.1}]'), /the list is not JSON/);
    assert.throws(() => parsePointList('[]'), /JSON array of objects/);
    assert.throws(() => parsePointList('[1, 2]'), /JSON array of objects/);
    assert.throws(() => parsePointList('{"lr": 1}'), /JSON array of objects/);
  });
});

describe('parseSpace', () => {
  it('reads a YAML mapping of dotted path → distribution', async () => {
    assert.deepEqual(
      await parseSpace(
        'lr: {distribution: log_uniform, low: 1.0e-5, high: 1}\nopt.name:\n  distribution: choice\n  values: [sgd, adam]\n',
      ),
      {
        lr: { distribution: 'log_uniform', low: 1e-5, high: 1 },
        'opt.name': { distribution: 'choice', values: ['sgd', 'adam'] },
      },
    );
  });

  it('says what is wrong with text that is no space, naming the key', async () => {
    await assert.rejects(parseSpace('lr: [1'), /the space is not YAML/);
    await assert.rejects(parseSpace('- lr'), /one key per dotted path/);
    await assert.rejects(parseSpace(''), /one key per dotted path/);
    await assert.rejects(parseSpace('lr: {low: 1}'), /space\.lr: give a mapping with a distribution/);
  });
});
