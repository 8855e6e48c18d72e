// The command's stdout and stderr: read from pipes, passed on unchanged to the runner's own stdout and stderr
// at once, and cut into log lines (run-log-lines.ts) for the shipper. Reading never waits for the service:
// only a slow terminal or reader of the runner's own output holds the command up, as it would without us.
import type { Readable, Writable } from 'node:stream';
import type { LogLineInput, LogStream } from '@assay/contract';
import { LineSplitter } from './run-log-lines.ts';

const IDLE_CHECK_MS = 250;

export interface CapturedStream {
  stream: LogStream;
  /** The command's end of the pipe. */
  from: Readable;
  /** Where its bytes go on, unchanged. */
  to: Writable;
}

/** Captures the streams until they end; `done` resolves then (or `close()` gives up on them). */
export class OutputCapture {
  readonly done: Promise<void>;
  readonly #splitters: LineSplitter[] = [];
  readonly #sources: Readable[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(streams: CapturedStream[], sink: (line: LogLineInput) => void) {
    const ended: Promise<void>[] = [];
    for (const { stream, from, to } of streams) {
      const splitter = new LineSplitter(stream, sink);
      this.#splitters.push(splitter);
      this.#sources.push(from);
      let passing = true;
      // A reader that went away (`assay run … | head -1`) ends the pass-through, not the capture.
      const broken = () => (passing = false);
      to.on('error', broken);
      from.on('data', (chunk: Buffer) => {
        if (passing && !to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
        splitter.push(chunk);
      });
      ended.push(
        new Promise<void>((resolve) => {
          from.once('close', resolve);
          from.once('end', resolve);
          from.once('error', () => resolve());
        }).then(() => {
          splitter.end();
          to.off('error', broken);
        }),
      );
    }
    this.#timer = setInterval(() => {
      for (const s of this.#splitters) s.idle();
    }, IDLE_CHECK_MS);
    this.#timer.unref();
    this.done = Promise.all(ended).then(() => clearInterval(this.#timer));
  }

  /**
   * After the command exited: waits up to `graceMs` for the pipes to be drained and closed (a process that
   * left the command's group may hold them open), then stops reading.
   */
  async finish(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([this.done, late]);
    clearTimeout(timer);
    for (const source of this.#sources) source.destroy();
    await this.done;
  }
}
