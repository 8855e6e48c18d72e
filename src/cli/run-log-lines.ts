// The command's output as log lines: bytes of one stream in, lines with their stream and time out. Splits at
// "\n"; keeps a `\r` progress bar to its final state (plus one intermediate state every few seconds); sends a
// partial line after a second without output; splits lines over MAX_LOG_LINE_BYTES. Never throws on bad UTF-8.
import type { LogLineInput, LogStream } from '@assay/contract';
import { MAX_LOG_LINE_BYTES } from '@assay/contract/log-limits';

const NL = 0x0a;
const CR = 0x0d;
/** A line without its newline is sent after this long without output on its stream. */
export const PARTIAL_LINE_IDLE_MS = 1000;
/** A `\r`-rewritten line keeps at most one intermediate state per this long, besides its final state. */
export const PROGRESS_STATE_MS = 5000;

/**
 * One stream's splitter. `push` feeds bytes as they are read, `idle` is called on a timer (it sends a
 * partial line once the stream has been quiet PARTIAL_LINE_IDLE_MS), `end` sends what is left.
 *
 * - A partial line that is sent (idle, or over MAX_LOG_LINE_BYTES) is a line of its own; what follows it up
 *   to the next newline is the next line.
 * - `a\rb\rc\n` is one line, `c`: the text after the last `\r`. While a line is being rewritten, the state
 *   before a `\r` is sent as a line of its own when PROGRESS_STATE_MS passed since the line began or since
 *   its last sent state. `a\r\n` (a CRLF ending) is `a`.
 * - Invalid UTF-8 becomes U+FFFD; a line's text is cut into pieces of at most MAX_LOG_LINE_BYTES of UTF-8,
 *   never inside a character.
 */
export class LineSplitter {
  readonly #stream: LogStream;
  readonly #emit: (line: LogLineInput) => void;
  readonly #now: () => number;
  /** Bytes of the current segment: since the last "\n" or "\r". */
  #parts: Buffer[] = [];
  #bytes = 0;
  /** When the current line's first byte arrived, and when its last byte did. */
  #lineStart = 0;
  #lastData = 0;
  /** The segment before the last "\r" of the line, not yet sent; and when the line last sent a state. */
  #lastSegment: Buffer | undefined;
  #lastStateAt = 0;
  /** Whether part of the current line was sent already (a partial line, a progress state, a split). */
  #sentPart = false;
  #inLine = false;
  /** Whether the line was rewritten with "\r": its partial states then follow PROGRESS_STATE_MS too. */
  #sawCR = false;
  /** The ISO text of a line start, kept: lines read together share it. */
  #timeOf = -1;
  #time = '';

  constructor(stream: LogStream, emit: (line: LogLineInput) => void, now: () => number = Date.now) {
    this.#stream = stream;
    this.#emit = emit;
    this.#now = now;
  }

  push(chunk: Buffer): void {
    const now = this.#now();
    this.#lastData = now;
    let start = 0;
    let nl = chunk.indexOf(NL);
    let cr = chunk.indexOf(CR);
    while (nl !== -1 || cr !== -1) {
      const i = nl === -1 ? cr : cr === -1 ? nl : Math.min(nl, cr);
      const byte = chunk[i];
      if (byte === NL) nl = chunk.indexOf(NL, i + 1);
      else cr = chunk.indexOf(CR, i + 1);
      this.#begin(now);
      if (i > start) this.#append(chunk.subarray(start, i));
      start = i + 1;
      if (byte === NL) this.#endLine();
      else this.#carriageReturn(now);
    }
    if (start < chunk.length) {
      this.#begin(now);
      this.#append(chunk.subarray(start));
    }
  }

  /** Sends a partial line when the stream has been quiet long enough. */
  idle(): void {
    const now = this.#now();
    if (!this.#inLine || this.#bytes === 0 || now - this.#lastData < PARTIAL_LINE_IDLE_MS) return;
    if (this.#sawCR && now - this.#lastStateAt < PROGRESS_STATE_MS) return;
    // A character cut in two by the pause waits for its last bytes.
    const all = this.#take();
    const cut = completeLength(all);
    if (cut === 0) {
      this.#parts = [all];
      this.#bytes = all.length;
      return;
    }
    this.#send(all.subarray(0, cut));
    if (cut < all.length) {
      this.#parts = [all.subarray(cut)];
      this.#bytes = all.length - cut;
    }
    this.#lastSegment = undefined;
    this.#lastStateAt = now;
  }

  /** The stream closed: whatever is left is a line. */
  end(): void {
    if (this.#inLine && (this.#bytes > 0 || this.#lastSegment !== undefined)) this.#endLine();
  }

  #begin(now: number): void {
    if (this.#inLine) return;
    this.#inLine = true;
    this.#lineStart = now;
    this.#lastStateAt = now;
  }

  #append(bytes: Buffer): void {
    // What follows a partial line that was sent is a line of its own, from now.
    if (this.#bytes === 0 && this.#sentPart && !this.#sawCR) this.#lineStart = this.#lastData;
    this.#parts.push(bytes); // a stream's chunks are its own: no copy
    this.#bytes += bytes.length;
    // A line past the limit goes out in pieces as it grows, so a line with no end never fills the memory.
    while (this.#bytes > MAX_LOG_LINE_BYTES) {
      const all = Buffer.concat(this.#parts);
      const cut = charBoundary(all, MAX_LOG_LINE_BYTES);
      this.#send(all.subarray(0, cut));
      this.#parts = [all.subarray(cut)];
      this.#bytes = all.length - cut;
      this.#lastSegment = undefined;
    }
  }

  #take(): Buffer {
    const all = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts);
    this.#parts = [];
    this.#bytes = 0;
    return all;
  }

  #carriageReturn(now: number): void {
    this.#sawCR = true;
    if (this.#bytes === 0) return; // "\r\r" or a "\r" first: nothing was drawn
    const segment = this.#take();
    if (this.#lastSegment !== undefined && now - this.#lastStateAt >= PROGRESS_STATE_MS) {
      this.#send(this.#lastSegment);
      this.#lastStateAt = now;
    }
    this.#lastSegment = segment;
  }

  #endLine(): void {
    const last = this.#bytes > 0 ? this.#take() : this.#lastSegment;
    if (last !== undefined) this.#send(last);
    else if (!this.#sentPart) this.#send(Buffer.alloc(0)); // an empty line is a line
    this.#lastSegment = undefined;
    this.#sentPart = false;
    this.#sawCR = false;
    this.#inLine = false;
  }

  #send(bytes: Buffer): void {
    this.#sentPart = true;
    if (this.#timeOf !== this.#lineStart) {
      this.#timeOf = this.#lineStart;
      this.#time = new Date(this.#lineStart).toISOString();
    }
    const time = this.#time;
    for (const text of splitUtf8(bytes.toString('utf8'), MAX_LOG_LINE_BYTES))
      this.#emit({ stream: this.#stream, time, text });
  }
}

/** The largest cut ≤ `limit` that does not fall inside a UTF-8 sequence (a lead byte starts a character). */
function charBoundary(bytes: Buffer, limit: number): number {
  let cut = limit;
  // Continuation bytes are 10xxxxxx; a character is at most 4 bytes, so look back at most 3.
  while (cut > limit - 3 && cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut -= 1;
  return (bytes[cut]! & 0xc0) === 0x80 ? limit : cut;
}

/** The length of `bytes` without a last UTF-8 sequence that is still missing bytes. */
function completeLength(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 3); i -= 1) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + size > bytes.length ? i : bytes.length;
  }
  return bytes.length;
}

/**
 * Pieces of at most `limit` bytes of UTF-8, never splitting a character: decoding bad bytes as U+FFFD (3
 * bytes each) may make a text longer than the bytes it came from.
 */
export function splitUtf8(text: string, limit: number): string[] {
  if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) return [text];
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i)!;
    const units = code > 0xffff ? 2 : 1;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > limit) {
      pieces.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += units;
  }
  pieces.push(text.slice(start));
  return pieces;
}
