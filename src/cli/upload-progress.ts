// Upload progress on stderr, only when stderr is a terminal: a log file or a pipe gets no carriage returns.
import type { UploadProgress } from '../client/index.ts';
import { formatBytes } from '../client/format-bytes.ts';

/** A status line rewritten in place while uploads run. */
export class ProgressLine {
  readonly enabled: boolean;
  readonly #stream: NodeJS.WriteStream;
  #shown = false;

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.#stream = stream;
    this.enabled = stream.isTTY === true;
  }

  update(text: string): void {
    if (!this.enabled) return;
    this.#stream.write(`\r\x1b[K${text}`);
    this.#shown = true;
  }

  /** A line of its own (above the status line, which is redrawn by the next update). */
  note(text: string): void {
    if (!this.enabled) return;
    this.#stream.write(`${this.#shown ? '\r\x1b[K' : ''}${text}\n`);
    this.#shown = false;
  }

  /** Ends the status line so the next output starts on a fresh one. */
  done(): void {
    if (this.#shown) this.#stream.write('\n');
    this.#shown = false;
  }
}

/** "3.0 MiB / 10.0 MiB (30%)". */
export function describeProgress(p: UploadProgress): string {
  const percent = p.bytesTotal === 0 ? 100 : Math.floor((p.bytesDone / p.bytesTotal) * 100);
  return `${formatBytes(p.bytesDone)} / ${formatBytes(p.bytesTotal)} (${percent}%)`;
}
