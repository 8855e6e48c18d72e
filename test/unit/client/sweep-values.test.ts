// The one reader of a grid axis's values, shared by the CLI's `--set` and the web UI's sweep form. The cases
// marked "was" are where the two readers it replaced disagreed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSweepValues } from '../../../src/client/browser.ts';

describe('parseSweepValues', () => {
  it('reads JSON where the text is JSON, text otherwise, and trims each value', () => {
    assert.deepEqual(parseSweepValues(' 0.1 , 1e-3,true, null ,adam, "007", [1, 2], {"a": 1} '), [
      0.1,
      0.001,
      true,
      null,
      'adam',
      '007',
      [1, 2],
      { a: 1 },
    ]);
  });

  it('splits only at commas outside brackets, braces and double-quoted strings', () => {
    assert.deepEqual(parseSweepValues('[64,64],[128,"a,b"]'), [
      [64, 64],
      [128, 'a,b'],
    ]);
    assert.deepEqual(parseSweepValues('"adam, w", {"b": [1, 2]}, sgd'), ['adam, w', { b: [1, 2] }, 'sgd']);
    assert.deepEqual(parseSweepValues('"a\\"b, c", d'), ['a"b, c', 'd']);
  });

  it('ends a string at a quote after an escaped backslash (was: one value in the web form)', () => {
    assert.deepEqual(parseSweepValues('"a\\\\", b'), ['a\\', 'b']);
  });

  it('takes a backslash outside a string as an ordinary character (was: two values in the web form)', () => {
    // The quote opens a string (that never closes), so the comma after it does not split.
    assert.deepEqual(parseSweepValues('a\\"b, c'), ['a\\"b, c']);
    assert.deepEqual(parseSweepValues('C:\\data, D:\\data'), ['C:\\data', 'D:\\data']);
  });

  it('takes a closing bracket with no opening one as text (was: the rest one value in the web form)', () => {
    assert.deepEqual(parseSweepValues(']a, b}, c'), [']a', 'b}', 'c']);
  });

  it('refuses an empty value (was: dropped by the web form), but takes an empty string quoted', () => {
    for (const text of ['1,,2', '1,', ',1', '', '  ']) {
      assert.throws(() => parseSweepValues(text), /^Error: empty value/, text);
    }
    assert.deepEqual(parseSweepValues('"", 1'), ['', 1]);
  });
});
