import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogPage } from '../../../src/contract/logs.ts';
import { appendPage, EMPTY_LOG, markMatches, searchEntries } from '../../../src/web/ui/log-buffer.ts';

const page = (
  seqs: number[],
  dropped = { lines: 0, bytes: 0 },
  text = (seq: number) => `line ${seq}`,
): LogPage => ({
  lines: seqs.map((seq) => ({
    seq,
    stream: seq % 2 ? 'stdout' : 'stderr',
    time: '2026-01-01T00:00:00.000Z',
    text: text(seq),
  })),
  next_after: seqs[seqs.length - 1] ?? 0,
  complete: false,
  dropped,
});

describe('the log buffer', () => {
  it('appends pages in order and skips the lines it holds already', () => {
    let buffer = appendPage(EMPTY_LOG, page([1, 2, 3]));
    buffer = appendPage(buffer, page([3, 4]));
    assert.deepEqual(
      buffer.entries.map((e) => (e.kind === 'line' ? [e.seq, e.stream, e.text] : e)),
      [
        [1, 'stdout', 'line 1'],
        [2, 'stderr', 'line 2'],
        [3, 'stdout', 'line 3'],
        [4, 'stderr', 'line 4'],
      ],
    );
    assert.equal(buffer.lastSeq, 4);
    assert.equal(appendPage(buffer, page([])), buffer, 'an empty page changes nothing');
  });

  it('marks where the size cap dropped lines from the middle', () => {
    const dropped = { lines: 95, bytes: 4_000, after_seq: 5 };
    const buffer = appendPage(EMPTY_LOG, page([1, 2, 3, 4, 5, 101, 102], dropped));
    assert.deepEqual(buffer.entries[5], { kind: 'gap', after: 5, lines: 95 });
    assert.equal(buffer.entries.length, 8);
    assert.deepEqual(buffer.dropped, dropped);
  });

  it('keeps at most the newest `max` lines and counts the ones it let go', () => {
    let buffer = EMPTY_LOG;
    for (let start = 1; start <= 100; start += 10)
      buffer = appendPage(buffer, page(Array.from({ length: 10 }, (_, i) => start + i)), 25);
    assert.equal(buffer.entries.length, 25);
    assert.equal(buffer.trimmed, 75);
    const first = buffer.entries[0]!;
    assert.equal(first.kind === 'line' && first.seq, 76);
  });

  it('carries each stream’s colour into its next line', () => {
    const buffer = appendPage(
      EMPTY_LOG,
      page([1, 2, 3], undefined, (seq) => (seq === 1 ? '\x1b[32mgreen' : `plain ${seq}`)),
    );
    const styles = buffer.entries.map((e) => (e.kind === 'line' ? e.segments[0]!.style : null));
    assert.deepEqual(styles, [{ fg: { index: 2 } }, {}, { fg: { index: 2 } }]);
  });

  it('finds the lines holding a text, letter case ignored, and marks each match', () => {
    const buffer = appendPage(
      EMPTY_LOG,
      page([1, 2, 3], undefined, (seq) => ['Loss 0.5', 'accuracy', '\x1b[31mloss\x1b[0m and LOSS'][seq - 1]!),
    );
    const found = searchEntries(buffer.entries, 'loss');
    assert.deepEqual(
      found.map((e) => e.kind === 'line' && e.seq),
      [1, 3],
    );
    assert.equal(searchEntries(buffer.entries, '').length, 3);
    const third = found[1]!;
    assert.ok(third.kind === 'line');
    assert.deepEqual(markMatches(third.segments, 'loss'), [
      { text: 'loss', style: { fg: { index: 1 } }, match: true },
      { text: ' and ', style: {}, match: false },
      { text: 'LOSS', style: {}, match: true },
    ]);
    assert.deepEqual(markMatches([{ text: 'abcabc', style: {} }], 'ca'), [
      { text: 'ab', style: {}, match: false },
      { text: 'ca', style: {}, match: true },
      { text: 'bc', style: {}, match: false },
    ]);
  });
});
