import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { LogLine, LogLineInput, LogStream } from '@assay/contract';

/**
 * How a chunk's lines are kept at rest: one JSON array `[stream, time, text]` per line (stream 0 stdout, 1
 * stderr; time in UTC ISO form), lines joined by `\n`, the whole raw-deflated. A chunk of console output
 * shrinks several times over (the figures: docs/run-logs.md); decoding needs only the chunk's first seq.
 */
const STREAMS: readonly LogStream[] = ['stdout', 'stderr'];

export interface EncodedChunk {
  body: Buffer;
  /** The lines' text in UTF-8 plus a line break each: what the per-run cap counts. */
  rawBytes: number;
}

export function encodeChunk(lines: readonly LogLineInput[]): EncodedChunk {
  let rawBytes = 0;
  const rows = lines.map((line) => {
    rawBytes += Buffer.byteLength(line.text) + 1;
    return JSON.stringify([line.stream === 'stderr' ? 1 : 0, utc(line.time), line.text]);
  });
  return { body: deflateRawSync(rows.join('\n')), rawBytes };
}

export function decodeChunk(firstSeq: number, body: Uint8Array): LogLine[] {
  const text = inflateRawSync(body).toString('utf8');
  return text.split('\n').map((row, i) => {
    const [stream, time, line] = JSON.parse(row) as [number, string, string];
    return { seq: firstSeq + i, stream: STREAMS[stream] ?? 'stdout', time, text: line };
  });
}

/** What `toISOString` gives, and what `assay run` sends: kept as it is (most lines; a parse costs more). */
const CANONICAL_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A runner's clock may say +02:00; answers give every time in UTC, as the rest of the API does. */
function utc(time: string): string {
  if (CANONICAL_UTC.test(time)) return time;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString();
}
