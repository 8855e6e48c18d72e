// Ships the command's log lines to the service (POST …/runs/{r}/logs) in ordered, numbered chunks, one
// request at a time, without ever making the capture wait: lines queue in memory, past a bound in files on
// disk, past a bound on disk the oldest unsent ones are dropped (and a line in the log says how many).
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppendLogResult, LogLineInput } from '@assay/contract';
import { MAX_LOG_LINES_PER_CHUNK } from '@assay/contract/log-limits';
import { APIConnectionError, APIError, ServerError } from '../client/index.ts';
import { formatBytes } from '../client/format-bytes.ts';

export interface LogShipperOptions {
  /** Stores lines firstSeq, firstSeq + 1, … (the client's runs.appendLogs). */
  send(firstSeq: number, lines: LogLineInput[]): Promise<AppendLogResult>;
  /** Where lines wait once the memory bound is passed (created when needed). */
  spillDir: string;
  /** What the runner says on its stderr: a failure, a drop, lines left unsent. Each kind once. */
  notice(message: string): void;
  /** Bytes of lines kept in memory before the oldest go to disk; default 8 MiB. */
  memoryBytes?: number;
  /** Bytes of lines on disk before the oldest are dropped; default 256 MiB. */
  diskBytes?: number;
  /** A chunk goes when it is full or its oldest line has waited this long; default 1 s. */
  intervalMs?: number;
}

/** Lines of one chunk: one place is kept for the line that says lines were dropped before it. */
const CHUNK_LINES = MAX_LOG_LINES_PER_CHUNK - 1;
/** Bytes of one chunk's body, well under the service's default body limit (2 MiB). */
const CHUNK_BYTES = 1 << 20;
const FIRST_RETRY_MS = 500;
const ESCAPED = /["\\\u0000-\u001f]/;
const MAX_RETRY_MS = 10_000;
/** How long the first lines after a quiet spell wait for the rest of their burst. */
const LEADING_MS = 50;

interface Queued {
  line: LogLineInput;
  /** Its size in the request body (JSON), near enough. */
  size: number;
}

interface Segment {
  file: string;
  lines: number;
  bytes: number;
}

/**
 * Seq numbers are given when a chunk is formed, not when a line is read: a chunk, once formed, is sent again
 * as it is until the service has it (first_seq makes that idempotent), and lines dropped before they were in
 * a chunk leave no gap in the numbers.
 */
export class LogShipper {
  readonly #options: Required<Omit<LogShipperOptions, 'send' | 'notice' | 'spillDir'>>;
  readonly #send: LogShipperOptions['send'];
  readonly #notice: (message: string) => void;
  readonly #spillDir: string;
  #memory: Queued[] = [];
  #memoryBytes = 0;
  #segments: Segment[] = [];
  #diskBytes = 0;
  #segmentCount = 0;
  #inflight: { firstSeq: number; lines: LogLineInput[] } | undefined;
  #nextSeq = 1;
  #dropped = { lines: 0, bytes: 0 };
  #droppedHere = { lines: 0, bytes: 0 };
  #pumping: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastSentAt = 0;
  #wake: (() => void) | undefined;
  #draining = false;
  #stopped = false;
  #broken = false;
  readonly #said = new Set<string>();
  #sent = 0;

  constructor(options: LogShipperOptions) {
    this.#send = options.send;
    this.#notice = options.notice;
    this.#spillDir = options.spillDir;
    this.#options = {
      memoryBytes: options.memoryBytes ?? 8 << 20,
      diskBytes: options.diskBytes ?? 256 << 20,
      intervalMs: options.intervalMs ?? 1000,
    };
  }

  /** Lines the service has stored, and lines dropped to stay within the disk bound. */
  get stats(): { sent: number; dropped: { lines: number; bytes: number } } {
    return { sent: this.#sent, dropped: { ...this.#dropped } };
  }

  /** Queues a line; never waits. */
  add(line: LogLineInput): void {
    if (this.#stopped || this.#broken) return;
    // Quotes, backslashes and control characters grow in JSON, up to 6 bytes each.
    const size =
      (ESCAPED.test(line.text)
        ? Buffer.byteLength(JSON.stringify(line.text))
        : Buffer.byteLength(line.text)) + 64;
    this.#memory.push({ line, size });
    this.#memoryBytes += size;
    if (this.#memoryBytes > this.#options.memoryBytes) this.#spill();
    this.#schedule();
  }

  /**
   * Sends everything queued, trying until `deadlineMs` has passed; then stops. Answers the number of lines
   * left unsent (said on stderr too).
   */
  async finish(deadlineMs: number): Promise<number> {
    this.#draining = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
    const all = (async () => {
      while (!this.#broken && !this.#stopped && this.#waiting() > 0) {
        this.#pump();
        await this.#pumping;
      }
    })();
    await Promise.race([all, late]);
    clearTimeout(timer);
    const left = this.#broken ? 0 : this.#waiting();
    this.stop();
    if (left > 0)
      this.#notice(
        `${left} line(s) of the command's output were not sent: the service did not take them within ${deadlineMs / 1000} s`,
      );
    return left;
  }

  /** No more sending; the spilled lines are removed. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#wake?.();
    rmSync(this.#spillDir, { recursive: true, force: true });
    this.#segments = [];
    this.#memory = [];
  }

  #waiting(): number {
    return (
      (this.#inflight?.lines.length ?? 0) +
      this.#memory.length +
      this.#segments.reduce((sum, s) => sum + s.lines, 0)
    );
  }

  #schedule(): void {
    if (this.#pumping || this.#stopped) return;
    if (this.#memory.length >= CHUNK_LINES || this.#memoryBytes >= CHUNK_BYTES || this.#segments.length > 0)
      this.#pump();
    else {
      // At most one chunk per interval, but output after a quiet spell goes out at once (a burst's first
      // lines gathered for a moment), so a program printing now and then is seen well within a second.
      const wait = Math.max(LEADING_MS, this.#lastSentAt + this.#options.intervalMs - Date.now());
      this.#timer ??= setTimeout(() => this.#pump(), wait).unref();
    }
  }

  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pumping || this.#stopped) return;
    this.#pumping = (async () => {
      for (;;) {
        this.#inflight ??= this.#nextChunk();
        if (this.#inflight === undefined || this.#stopped) return;
        if (!(await this.#deliver(this.#inflight))) return;
        this.#nextSeq += this.#inflight.lines.length;
        this.#sent += this.#inflight.lines.length;
        this.#inflight = undefined;
        this.#lastSentAt = Date.now();
        // A partial chunk waits for the next interval unless the run is ending.
        const full = this.#memory.length >= CHUNK_LINES || this.#memoryBytes >= CHUNK_BYTES;
        if (!this.#draining && !full && this.#segments.length === 0) return;
      }
    })().finally(() => {
      this.#pumping = undefined;
      if (!this.#draining && this.#waiting() > 0) this.#schedule();
    });
  }

  /** The next lines in order: the oldest spilled segment, else the memory's oldest. */
  #nextChunk(): { firstSeq: number; lines: LogLineInput[] } | undefined {
    let lines: LogLineInput[];
    const segment = this.#segments.shift();
    if (segment) {
      this.#diskBytes -= segment.bytes;
      lines = readFileSync(segment.file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as LogLineInput);
      unlinkSync(segment.file);
    } else {
      const taken = this.#takeMemory();
      if (taken.length === 0) return undefined;
      lines = taken.map((q) => q.line);
    }
    if (this.#droppedHere.lines > 0) {
      const { lines: n, bytes } = this.#droppedHere;
      lines.unshift({
        stream: 'stderr',
        time: lines[0]!.time,
        text: `[assay: ${n} line(s) (${formatBytes(bytes)}) of output dropped here: the service was unreachable and the runner's buffer full]`,
      });
      this.#droppedHere = { lines: 0, bytes: 0 };
    }
    return { firstSeq: this.#nextSeq, lines };
  }

  #takeMemory(): Queued[] {
    let count = 0;
    let bytes = 0;
    while (count < this.#memory.length && count < CHUNK_LINES) {
      const size = this.#memory[count]!.size;
      if (count > 0 && bytes + size > CHUNK_BYTES) break;
      bytes += size;
      count += 1;
    }
    this.#memoryBytes -= bytes;
    return this.#memory.splice(0, count);
  }

  /** Moves the memory's oldest lines to disk, a chunk per file, until half the memory bound is left. */
  #spill(): void {
    try {
      mkdirSync(this.#spillDir, { recursive: true, mode: 0o700 });
      while (this.#memoryBytes > this.#options.memoryBytes / 2) {
        const taken = this.#takeMemory();
        const bytes = taken.reduce((sum, q) => sum + q.size, 0);
        const file = path.join(this.#spillDir, `${String(this.#segmentCount++).padStart(8, '0')}.jsonl`);
        writeFileSync(file, taken.map((q) => `${JSON.stringify(q.line)}\n`).join(''), { mode: 0o600 });
        this.#segments.push({ file, lines: taken.length, bytes });
        this.#diskBytes += bytes;
      }
      while (this.#diskBytes > this.#options.diskBytes && this.#segments.length > 1) {
        const oldest = this.#segments.shift()!;
        unlinkSync(oldest.file);
        this.#diskBytes -= oldest.bytes;
        for (const d of [this.#dropped, this.#droppedHere]) {
          d.lines += oldest.lines;
          d.bytes += oldest.bytes;
        }
        this.#say(
          'dropped',
          `the service has been unreachable and the command's unsent output passed ${formatBytes(this.#options.diskBytes)} on disk: dropping its oldest unsent lines (the log will say how many)`,
        );
      }
    } catch (error) {
      // A full or read-only disk: the oldest lines in memory go instead, counted the same way.
      this.#say('spill', `cannot keep the command's output on disk (${(error as Error).message})`);
      while (this.#memoryBytes > this.#options.memoryBytes / 2) {
        const taken = this.#takeMemory();
        for (const d of [this.#dropped, this.#droppedHere]) {
          d.lines += taken.length;
          d.bytes += taken.reduce((sum, q) => sum + q.size, 0);
        }
      }
    }
  }

  /** Sends one chunk until the service has it; false when it gave up (stopped, or refused for good). */
  async #deliver(chunk: { firstSeq: number; lines: LogLineInput[] }): Promise<boolean> {
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      if (this.#stopped) return false;
      try {
        await this.#send(chunk.firstSeq, chunk.lines);
        return true;
      } catch (error) {
        const transient =
          error instanceof APIConnectionError ||
          error instanceof ServerError ||
          (error instanceof APIError && error.statusCode === 429);
        if (!transient) {
          this.#broken = true;
          this.#notice(`the command's output is not sent to the service: ${(error as Error).message}`);
          return false;
        }
        this.#say(
          'retrying',
          `could not send the command's output yet (${(error as Error).message}); keeping it and trying again`,
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = undefined;
      }
    }
  }

  #say(kind: string, message: string): void {
    if (this.#said.has(kind)) return;
    this.#said.add(kind);
    this.#notice(message);
  }
}
