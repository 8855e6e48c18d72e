// The metrics file of `assay run`: the command appends JSON lines to ASSAY_METRICS_FILE, the runner tails it
// and ships the points through the run handle's batching logMetrics.
import { open, type FileHandle } from 'node:fs/promises';
import { NON_FINITE_METRIC_VALUES, decodeMetricValue, type MetricValue } from '@assay/contract/metric-values';
import type { Run } from '../client/index.ts';

const POLL_MS = 250;
const CHUNK = 1 << 16;

export interface MetricsTailEvents {
  /** A line that is not a metrics record (its 1-based number and why); it is skipped. */
  onMalformed(line: number, reason: string): void;
  /** Points that could not be stored (the service refused them, or stayed unreachable). */
  onError(error: unknown): void;
}

/**
 * Reads the file from where it left off every POLL_MS: complete lines are parsed and logged on the run, a
 * last line without its newline waits for the rest (or for finish(), when the command has exited).
 */
export class MetricsFileTail {
  readonly #file: string;
  readonly #run: Run;
  readonly #events: MetricsTailEvents;
  #handle: FileHandle | undefined;
  #offset = 0;
  #partial = '';
  #line = 0;
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;
  #stopped = false;
  readonly #decoder = new TextDecoder();

  constructor(file: string, run: Run, events: MetricsTailEvents) {
    this.#file = file;
    this.#run = run;
    this.#events = events;
  }

  start(): void {
    this.#schedule();
  }

  /** No further reads (the file is left as it is). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const handle = this.#handle;
    this.#handle = undefined;
    void (this.#reading ?? Promise.resolve()).then(() => handle?.close()).catch(() => undefined);
  }

  /**
   * After the command exited: reads what is left, the last line even without a newline, and stores
   * every point.
   */
  async finish(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#reading;
    try {
      await this.#read(true);
      await this.#handle?.close();
      this.#handle = undefined;
      await this.#run.flushMetrics();
    } catch (error) {
      this.#events.onError(error);
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#reading = this.#read(false)
        .catch((error: unknown) => this.#events.onError(error))
        .finally(() => {
          this.#reading = undefined;
          this.#schedule();
        });
    }, POLL_MS);
  }

  async #read(final: boolean): Promise<void> {
    try {
      this.#handle ??= await open(this.#file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // nothing written yet
      throw error;
    }
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await this.#handle.read(buffer, 0, CHUNK, this.#offset);
      if (bytesRead === 0) break;
      this.#offset += bytesRead;
      this.#partial += this.#decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
      const lines = this.#partial.split('\n');
      this.#partial = lines.pop()!;
      for (const line of lines) this.#take(line);
    }
    if (final) {
      this.#partial += this.#decoder.decode();
      if (this.#partial.trim() !== '') this.#take(this.#partial);
      this.#partial = '';
    }
  }

  #take(text: string): void {
    this.#line += 1;
    if (text.trim() === '') return;
    const record = parseMetricsLine(text);
    if (typeof record === 'string') {
      this.#events.onMalformed(this.#line, record);
      return;
    }
    try {
      this.#run.logMetrics(record.values, { step: record.step, timestamp: record.timestamp });
    } catch (error) {
      if (error instanceof RangeError || error instanceof TypeError)
        this.#events.onMalformed(this.#line, error.message);
      else this.#events.onError(error); // an earlier batch that was not stored
    }
  }
}

export interface MetricsRecord {
  step: number | undefined;
  timestamp: Date | string | undefined;
  values: Record<string, number>;
}

const NON_FINITE = new Set<string>(NON_FINITE_METRIC_VALUES);

/**
 * One line of the metrics file: a JSON object with an optional `step` (a whole number) and `timestamp` (ISO
 * 8601 text, or Unix seconds as Python's time.time() gives them), every other member a metric whose value is
 * a number or "NaN", "Infinity", "-Infinity". Python's json.dumps writes those three bare (`NaN`), which JSON
 * does not allow, so they are accepted bare too. Answers the record, or why the line is not one.
 */
export function parseMetricsLine(text: string): MetricsRecord | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(quoteBareNonFinite(text));
  } catch (error) {
    return `not JSON (${(error as Error).message})`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'not a JSON object like {"step": 1, "loss": 0.5}';
  const { step, timestamp, ...metrics } = parsed as Record<string, unknown>;
  if (step !== undefined && (typeof step !== 'number' || !Number.isInteger(step) || step < 0))
    return `"step" must be a whole number from 0, not ${JSON.stringify(step)}`;
  let time: Date | string | undefined;
  if (typeof timestamp === 'number' && Number.isFinite(timestamp)) time = new Date(timestamp * 1000);
  else if (typeof timestamp === 'string') time = timestamp;
  else if (timestamp !== undefined)
    return `"timestamp" must be ISO 8601 text or Unix seconds, not ${JSON.stringify(timestamp)}`;
  const values: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (typeof value === 'number') values[key] = value;
    else if (typeof value === 'string' && NON_FINITE.has(value))
      values[key] = decodeMetricValue(value as MetricValue);
    else return `metric ${JSON.stringify(key)} must be a number, "NaN", "Infinity" or "-Infinity"`;
  }
  if (Object.keys(values).length === 0) return 'no metric in it';
  return { step: step as number | undefined, timestamp: time, values };
}

/** Rewrites bare NaN, Infinity and -Infinity outside strings as the strings the contract uses. */
function quoteBareNonFinite(text: string): string {
  if (!/NaN|Infinity/.test(text)) return text;
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    const word = ['-Infinity', 'Infinity', 'NaN'].find((w) => text.startsWith(w, i));
    if (word) {
      out += `"${word}"`;
      i += word.length - 1;
    } else out += c;
  }
  return out;
}
