import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInline, parseMarkdown, safeHref } from '../../../src/web/ui/markdown.ts';

describe('notes markdown', () => {
  it('parses headings, paragraphs, lists, quotes, rules and fenced code', () => {
    const blocks = parseMarkdown(
      '# Result\n\nLoss went\ndown.\n\n- one\n- two\n  wrapped\n\n3. third\n4. fourth\n\n> quoted\n\n---\n\n```\n<b>x</b>\n```',
    );
    assert.deepEqual(blocks, [
      { type: 'heading', level: 1, children: [{ type: 'text', text: 'Result' }] },
      { type: 'paragraph', children: [{ type: 'text', text: 'Loss went\ndown.' }] },
      {
        type: 'list',
        ordered: false,
        start: 1,
        items: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two wrapped' }]],
      },
      {
        type: 'list',
        ordered: true,
        start: 3,
        items: [[{ type: 'text', text: 'third' }], [{ type: 'text', text: 'fourth' }]],
      },
      { type: 'quote', children: [{ type: 'paragraph', children: [{ type: 'text', text: 'quoted' }] }] },
      { type: 'rule' },
      { type: 'code', text: '<b>x</b>' },
    ]);
  });

  it('parses emphasis, strong, code spans and escapes', () => {
    assert.deepEqual(parseInline('a *b* **c** `d*e` \\*f\\* snake_case_name _g_'), [
      { type: 'text', text: 'a ' },
      { type: 'em', children: [{ type: 'text', text: 'b' }] },
      { type: 'text', text: ' ' },
      { type: 'strong', children: [{ type: 'text', text: 'c' }] },
      { type: 'text', text: ' ' },
      { type: 'code', text: 'd*e' },
      { type: 'text', text: ' *f* snake_case_name ' },
      { type: 'em', children: [{ type: 'text', text: 'g' }] },
    ]);
  });

  it('links http and https only; any other scheme keeps its text, unlinked', () => {
    assert.deepEqual(
      parseInline('[paper](https://arxiv.org/abs/1) [bad](javascript:alert(1)) [d](data:text/html,x)'),
      [
        { type: 'link', href: 'https://arxiv.org/abs/1', children: [{ type: 'text', text: 'paper' }] },
        { type: 'text', text: ' ' },
        { type: 'link', href: null, children: [{ type: 'text', text: 'bad' }] },
        { type: 'text', text: ' ' },
        { type: 'link', href: null, children: [{ type: 'text', text: 'd' }] },
      ],
    );
    assert.deepEqual(parseInline('see http://example.com/x.'), [
      { type: 'text', text: 'see ' },
      {
        type: 'link',
        href: 'http://example.com/x',
        children: [{ type: 'text', text: 'http://example.com/x' }],
      },
      { type: 'text', text: '.' },
    ]);
    assert.equal(safeHref(' JavaScript:alert(1)'), null);
    assert.equal(safeHref('/relative'), null);
    assert.equal(safeHref('HTTPS://Example.com'), 'https://example.com/');
  });

  it('keeps HTML as text', () => {
    assert.deepEqual(parseMarkdown('<img src=x onerror=alert(1)> <script>x</script>'), [
      {
        type: 'paragraph',
        children: [{ type: 'text', text: '<img src=x onerror=alert(1)> <script>x</script>' }],
      },
    ]);
  });
});
