// What the log pane holds of a run's console log: the newest lines (a bounded number, however long the log),
// each parsed once into styled segments as it arrives, the marker where the service's size cap dropped lines,
// and the search over them. Pure data, so the pane only renders it.
import type { LogDropped, LogPage, LogStream } from '@assay/contract';
import { parseAnsi, PLAIN, plainText, type AnsiSegment, type AnsiStyle } from './ansi.ts';

/** Lines the pane keeps: past this, the oldest go (the download has them all). */
export const MAX_SHOWN_LINES = 20_000;

export interface LogLineEntry {
  kind: 'line';
  seq: number;
  stream: LogStream;
  time: string;
  segments: AnsiSegment[];
  /** The text without its escapes: what search matches. */
  text: string;
}

/** Where the service's size cap dropped lines from the middle of the log: seq numbers skip over them. */
export interface LogGapEntry {
  kind: 'gap';
  /** The seq before the gap (unique: one gap per skip). */
  after: number;
  lines: number;
}

export type LogEntry = LogLineEntry | LogGapEntry;

export interface LogBuffer {
  entries: LogEntry[];
  /** Lines read but no longer kept (the oldest, past MAX_SHOWN_LINES). */
  trimmed: number;
  /** The highest seq read. */
  lastSeq: number;
  /** The style each stream's last line left in force: a colour may span lines. */
  styles: Record<LogStream, AnsiStyle>;
  dropped: LogDropped;
}

export const EMPTY_LOG: LogBuffer = {
  entries: [],
  trimmed: 0,
  lastSeq: 0,
  styles: { stdout: PLAIN, stderr: PLAIN },
  dropped: { lines: 0, bytes: 0 },
};

/** The buffer with a page's lines appended (lines it holds already are skipped), at most `max` kept. */
export function appendPage(buffer: LogBuffer, page: LogPage, max = MAX_SHOWN_LINES): LogBuffer {
  const added: LogEntry[] = [];
  const styles = { ...buffer.styles };
  let lastSeq = buffer.lastSeq;
  for (const line of page.lines) {
    if (line.seq <= lastSeq) continue;
    if (line.seq > lastSeq + 1 && page.dropped.lines > 0)
      added.push({ kind: 'gap', after: lastSeq, lines: line.seq - lastSeq - 1 });
    const parsed = parseAnsi(line.text, styles[line.stream]);
    styles[line.stream] = parsed.state;
    added.push({
      kind: 'line',
      seq: line.seq,
      stream: line.stream,
      time: line.time,
      segments: parsed.segments,
      text: plainText(parsed.segments),
    });
    lastSeq = line.seq;
  }
  if (added.length === 0 && page.dropped.lines === buffer.dropped.lines) return buffer;
  let entries = added.length === 0 ? buffer.entries : buffer.entries.concat(added);
  let trimmed = buffer.trimmed;
  if (entries.length > max) {
    const removed = entries.slice(0, entries.length - max);
    trimmed += removed.filter((e) => e.kind === 'line').length;
    entries = entries.slice(entries.length - max);
  }
  return { entries, trimmed, lastSeq, styles, dropped: page.dropped };
}

/** The entries a search shows: every one for an empty query, else the lines holding it (case ignored). */
export function searchEntries(entries: LogEntry[], query: string): LogEntry[] {
  const needle = query.toLowerCase();
  if (needle === '') return entries;
  return entries.filter((e) => e.kind === 'line' && e.text.toLowerCase().includes(needle));
}

export interface MarkedSegment extends AnsiSegment {
  /** Part of a search match. */
  match: boolean;
}

/** A line's segments split where `query` matches (case ignored), each match marked. */
export function markMatches(segments: AnsiSegment[], query: string): MarkedSegment[] {
  if (query === '') return segments.map((s) => ({ ...s, match: false }));
  const text = plainText(segments);
  const lower = text.toLowerCase();
  const needle = query.toLowerCase();
  // Match ranges over the plain text; lowercasing keeps lengths for the texts a log holds in practice, and a
  // text where it does not is shown unmarked rather than marked in the wrong place.
  if (lower.length !== text.length) return segments.map((s) => ({ ...s, match: false }));
  const ranges: Array<[number, number]> = [];
  for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + needle.length))
    ranges.push([at, at + needle.length]);
  const out: MarkedSegment[] = [];
  let offset = 0;
  for (const segment of segments) {
    const start = offset;
    const end = offset + segment.text.length;
    let cut = start;
    for (const [from, to] of ranges) {
      if (to <= cut || from >= end) continue;
      if (from > cut) out.push({ text: text.slice(cut, from), style: segment.style, match: false });
      const stop = Math.min(to, end);
      out.push({ text: text.slice(Math.max(from, cut), stop), style: segment.style, match: true });
      cut = stop;
    }
    if (cut < end) out.push({ text: text.slice(cut, end), style: segment.style, match: false });
    offset = end;
  }
  return out;
}
