import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitSnippet } from '../../../src/web/ui/highlight.ts';

describe('splitSnippet', () => {
  it('splits a snippet into its marked matches and the text between them', () => {
    assert.deepEqual(splitSnippet('the <mark>warmup</mark> lowers <mark>loss</mark>.'), [
      { text: 'the ', marked: false },
      { text: 'warmup', marked: true },
      { text: ' lowers ', marked: false },
      { text: 'loss', marked: true },
      { text: '.', marked: false },
    ]);
  });

  it('keeps a snippet without matches as one text part, and an empty one as none', () => {
    assert.deepEqual(splitSnippet('no match here'), [{ text: 'no match here', marked: false }]);
    assert.deepEqual(splitSnippet(''), []);
  });

  it('leaves every other tag as text, inside and outside a match', () => {
    const parts = splitSnippet(
      '<script>alert(1)</script> <mark>needle</mark> <img src=x onerror=alert(2)><mark><b>x</b></mark>',
    );
    assert.deepEqual(parts, [
      { text: '<script>alert(1)</script> ', marked: false },
      { text: 'needle', marked: true },
      { text: ' <img src=x onerror=alert(2)>', marked: false },
      { text: '<b>x</b>', marked: true },
    ]);
  });

  it('leaves an unclosed or stray mark tag as text', () => {
    assert.deepEqual(splitSnippet('a <mark>b'), [{ text: 'a <mark>b', marked: false }]);
    assert.deepEqual(splitSnippet('a </mark> b'), [{ text: 'a </mark> b', marked: false }]);
    assert.deepEqual(splitSnippet('<MARK>a</MARK>'), [{ text: '<MARK>a</MARK>', marked: false }]);
  });
});
