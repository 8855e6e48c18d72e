import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { AppError } from '../../../src/server/http/errors.ts';

import {
  pointName,
  pointYaml,
  sweepPoints,
  tagLegacySweep,
  type EnumeratedSweep,
} from '../../../src/server/sweeps/sweep-points.ts';

/** The points of a request body written without `strategy`, read as the route reads it. */
const points = (spec: object) => sweepPoints(tagLegacySweep({ base_yaml: '', ...spec }) as EnumeratedSweep);

const refused = (code: string) => (e: unknown) =>
  e instanceof AppError && e.statusCode === 400 && e.code === code;

describe('sweep points', () => {
  it('takes the grid as nested loops in key order, the first path slowest', () => {
    assert.deepEqual(points({ grid: { a: [1, 2], b: ['x', 'y', 'z'] } }), [
      [
        ['a', 1],
        ['b', 'x'],
      ],
      [
        ['a', 1],
        ['b', 'y'],
      ],
      [
        ['a', 1],
        ['b', 'z'],
      ],
      [
        ['a', 2],
        ['b', 'x'],
      ],
      [
        ['a', 2],
        ['b', 'y'],
      ],
      [
        ['a', 2],
        ['b', 'z'],
      ],
    ]);
  });

  it('takes a list entry by entry', () => {
    assert.deepEqual(points({ list: [{ a: 1, 'b.c': 2 }, {}] }), [
      [
        ['a', 1],
        ['b.c', 2],
      ],
      [],
    ]);
  });

  it('refuses both or neither, empty value lists, empty segments and more than 1000 points', () => {
    assert.throws(() => points({}), refused('invalid_sweep'));
    assert.throws(() => points({ grid: { a: [1] }, list: [] }), refused('invalid_sweep'));
    assert.throws(() => points({ grid: { a: [1], b: [] } }), refused('invalid_sweep'));
    assert.throws(() => points({ grid: { '.a': [1] } }), refused('invalid_sweep'));
    assert.throws(() => points({ list: [{ 'a..b': 1 }] }), refused('invalid_sweep'));
    const ten = Array.from({ length: 10 }, (_, i) => i);
    assert.equal(points({ grid: { a: ten, b: ten, c: ten } }).length, 1000);
    assert.throws(() => points({ grid: { a: ten, b: ten, c: ten, d: [1, 2] } }), refused('sweep_too_large'));
  });

  it('sets paths in a copy of the base, creating mappings on the way, never walking into a scalar or a list', () => {
    const base = { optimizer: { lr: 0.1 }, layers: [1, 2], seed: 0 };
    assert.deepEqual(
      parse(
        pointYaml(base, [
          ['optimizer.lr', 0.01],
          ['sched.warmup', { steps: 10 }],
        ]),
      ),
      {
        optimizer: { lr: 0.01 },
        layers: [1, 2],
        seed: 0,
        sched: { warmup: { steps: 10 } },
      },
    );
    assert.deepEqual(base.optimizer, { lr: 0.1 }, 'the base is untouched');
    assert.throws(() => pointYaml(base, [['seed.x', 1]]), refused('invalid_sweep'));
    assert.throws(() => pointYaml(base, [['layers.0', 1]]), refused('invalid_sweep'));
  });

  it('names a point by its overrides, values JSON-encoded unless strings, cut to 200 characters', () => {
    assert.equal(
      pointName('lr', [
        ['optimizer.lr', 0.001],
        ['name', 'sgd'],
        ['flags', [1, true]],
      ]),
      'lr optimizer.lr=0.001 name=sgd flags=[1,true]',
    );
    assert.equal(pointName('p', []), 'p');
    const long = pointName('p', [['a', '😀'.repeat(300)]]);
    assert.equal([...long].length, 200);
    assert.ok(long.endsWith('…'));
    assert.doesNotMatch(long, /[\ud800-\udbff](?![\udc00-\udfff])/, 'no surrogate pair is split');
  });
});
