// Questions for `assay auth login`: @inquirer/password on a terminal, plain lines from stdin when a script
// pipes answers (no terminal to hide anything from, and a prompt library would wait for keystrokes).
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

  /** Reads without echo, so the key never appears on screen or in a terminal recording. */
  async hidden(question: string): Promise<string> {
    if (!this.interactive) {
      this.#output.write(`${question}: `);
      return this.#nextPipedLine(false);
    }
    const { default: password } = await import('@inquirer/password');
    try {
      // No mask and no Ctrl-T reveal: not even the key's length shows.
      const answer = await password(
        { message: question, toggleMask: false },
        { input: this.#input, output: this.#output },
      );
      return answer.trim();
    } catch (error) {
      if (error instanceof Error && error.name === 'ExitPromptError') throw new Interrupted('interrupted');
      throw error;
    }
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

  // Piped answers are not echoed by any terminal: the answer is shown only when not secret, and the
  // line ended.
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
