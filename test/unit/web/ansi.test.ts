import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applySgr, cssColor, parseAnsi, plainText } from '../../../src/web/ui/ansi.ts';

const ESC = '\x1b';

describe('parseAnsi', () => {
  it('turns SGR colours, bold and underline into styled segments, and resets them', () => {
    const { segments, state } = parseAnsi(`${ESC}[1;31merror${ESC}[0m: ${ESC}[4mfile${ESC}[24m ok`);
    assert.deepEqual(
      segments.map((s) => [s.text, s.style]),
      [
        ['error', { bold: true, fg: { index: 1 } }],
        [': ', {}],
        ['file', { underline: true }],
        [' ok', {}],
      ],
    );
    assert.deepEqual(state, {});
  });

  it('knows the bright colours, the default colour, 22 and 24, and an empty SGR as a reset', () => {
    assert.deepEqual(applySgr({}, '92'), { fg: { index: 10 } });
    assert.deepEqual(applySgr({ fg: { index: 3 }, bold: true }, '39'), { bold: true });
    assert.deepEqual(applySgr({ bold: true, dim: true, underline: true }, '22'), { underline: true });
    assert.deepEqual(applySgr({ underline: true }, '24'), {});
    assert.deepEqual(applySgr({ bold: true, fg: { index: 2 } }, ''), {});
    assert.deepEqual(applySgr({}, '44;97'), { bg: { index: 4 }, fg: { index: 15 } });
  });

  it('reads 256-colour and 24-bit colours, and ignores malformed ones', () => {
    assert.deepEqual(applySgr({}, '38;5;208'), { fg: { index: 208 } });
    assert.deepEqual(applySgr({}, '38;2;10;20;30;1'), { fg: { rgb: [10, 20, 30] }, bold: true });
    assert.deepEqual(applySgr({}, '48;5;17'), { bg: { index: 17 } });
    assert.deepEqual(applySgr({}, '38;5;300'), {});
    assert.deepEqual(applySgr({}, '38;2;1;2'), {});
    assert.equal(cssColor({ rgb: [10, 20, 30] }), 'rgb(10, 20, 30)');
    assert.equal(cssColor({ index: 16 }), 'rgb(0, 0, 0)');
    assert.equal(cssColor({ index: 196 }), 'rgb(255, 0, 0)');
    assert.equal(cssColor({ index: 232 }), 'rgb(8, 8, 8)');
    assert.match(cssColor({ index: 1 }), /^#[0-9a-f]{6}$/);
  });

  it('strips every other escape and control character: cursor moves, erase, titles, hyperlinks', () => {
    const line = `${ESC}[2K${ESC}[1Gstep 3${ESC}]0;title\x07 ${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\ ${ESC}[?25l${ESC}7done\x00\x08\x1b`;
    const { segments } = parseAnsi(line);
    assert.equal(plainText(segments), 'step 3 link done');
    assert.ok(segments.every((s) => Object.keys(s.style).length === 0));
  });

  it('keeps markup as text: a line is never HTML', () => {
    const line = '<script>alert(1)</script> <img src=x onerror=alert(2)>';
    assert.deepEqual(parseAnsi(line).segments, [{ text: line, style: {} }]);
  });

  it('carries a style into the next line of the stream, and shows what a carriage return leaves', () => {
    const first = parseAnsi(`${ESC}[33mwarming up`);
    const second = parseAnsi('still yellow', first.state);
    assert.deepEqual(second.segments, [{ text: 'still yellow', style: { fg: { index: 3 } } }]);
    assert.equal(plainText(parseAnsi(' 10%\r 50%\r100% done').segments), '100% done');
    assert.equal(plainText(parseAnsi('epoch 1 ████\r').segments), 'epoch 1 ████');
    assert.equal(plainText(parseAnsi('a\tb').segments), 'a\tb');
  });
});
