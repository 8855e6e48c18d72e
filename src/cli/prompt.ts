// Questions for `assay auth login`: hidden input on a terminal, plain lines from stdin when a script pipes answers.
import { createInterface, type Interface } from 'node:readline';
import { Interrupted } from './command-args.ts';

/** Asks on stderr (stdout stays for results) and reads from stdin. */
export class Prompter {
  readonly #input: NodeJS.ReadStream;
  readonly #output: NodeJS.WritableStream;
  #piped: { rl: Interface; lines: AsyncIterator<string> } | undefined;

  constructor(input: NodeJS.ReadStream = process.stdin, output: NodeJS.WritableStream = process.stderr) {
    this.#input = input;
    this.#output = output;
  }

  /** A terminal answers the prompts; otherwise each answer is the next line of stdin. */
  get interactive(): boolean {
    return this.#input.isTTY === true;
  }

  /** Reads without echo (raw mode), so the key never appears on screen or in a terminal recording. */
  async hidden(question: string): Promise<string> {
    this.#output.write(question);
    if (!this.interactive) return this.#nextPipedLine(false);
    const answer = await readRaw(this.#input);
    this.#output.write('\n');
    return answer.trim();
  }

  /** Reads one line; the terminal echoes it and handles editing (cooked mode). */
  async line(question: string): Promise<string> {
    this.#output.write(question);
    if (!this.interactive) return this.#nextPipedLine(true);
    // A fresh reader per question: one left open would also swallow the raw keystrokes of a hidden prompt.
    const rl = createInterface({ input: this.#input, terminal: false });
    try {
      const next = await rl[Symbol.asyncIterator]().next();
      return next.done ? '' : next.value.trim();
    } finally {
      rl.close();
    }
  }

  /** Lets the process exit: stdin is no longer read. */
  close(): void {
    this.#piped?.rl.close();
    this.#input.pause();
  }

  // Piped answers are not echoed by any terminal: the answer is shown only when not secret, and the line ended.
  async #nextPipedLine(echo: boolean): Promise<string> {
    // One reader for all piped answers: closing it between questions would drop the lines it buffered.
    if (this.#piped === undefined) {
      const rl = createInterface({ input: this.#input, terminal: false });
      this.#piped = { rl, lines: rl[Symbol.asyncIterator]() };
    }
    const next = await this.#piped.lines.next();
    const answer = next.done ? '' : next.value.trim();
    this.#output.write(`${echo ? answer : ''}\n`);
    return answer;
  }
}

/** Collects keystrokes until Enter. Ctrl-C interrupts, Ctrl-D on an empty line ends, Backspace and Ctrl-U edit. */
function readRaw(input: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (settle: () => void) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      settle();
    };
    const onData = (chunk: Buffer | string) => {
      // Bracketed-paste markers, if the terminal sends them, are not part of the key.
      for (const ch of String(chunk).replace(/\x1b\[20[01]~/g, '')) {
        if (ch === '\r' || ch === '\n') return finish(() => resolve(value));
        if (ch === '\u0003') return finish(() => reject(new Interrupted('interrupted')));
        if (ch === '\u0004' && value === '') return finish(() => resolve(''));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch === '\u0015') value = '';
        else if (ch >= ' ') value += ch;
      }
    };
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.on('data', onData);
    input.resume();
  });
}
