import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitFor } from './cli.ts';

const exec = promisify(execFile);

/** Single-quotes a word for the shell that tmux runs the session's command with. */
export const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * A tmux server of the test's own (its own socket, `-L`), so the developer's sessions are never touched: one
 * detached 200×50 session runs a command in a real terminal, keys are typed into it, and the screen is
 * read back.
 */
export class TmuxSession {
  readonly #socket: string;
  readonly #name = 'cli';

  private constructor(socket: string) {
    this.#socket = socket;
  }

  /**
   * Starts `command` (a shell command line); the pane stays after it ends, so its last screen can be read.
   */
  static async start(socket: string, command: string): Promise<TmuxSession> {
    const session = new TmuxSession(socket);
    await session.#tmux(
      'new-session',
      '-d',
      '-s',
      session.#name,
      '-x',
      '200',
      '-y',
      '50',
      `${command}; echo "EXIT=$?"; sleep 600`,
    );
    return session;
  }

  /** Types text literally (no key names), as a paste or a person would. */
  async type(text: string): Promise<void> {
    await this.#tmux('send-keys', '-t', this.#name, '-l', text);
  }

  /** Presses named keys: Enter, BSpace, C-c. */
  async press(...keys: string[]): Promise<void> {
    await this.#tmux('send-keys', '-t', this.#name, ...keys);
  }

  /** The whole screen and scrollback as text. */
  async screen(): Promise<string> {
    return (await this.#tmux('capture-pane', '-p', '-J', '-S', '-', '-t', this.#name)).stdout;
  }

  /** Waits until the screen matches, and answers it. */
  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    let last = '';
    try {
      return await waitFor(
        `the screen to match ${pattern}`,
        async () => {
          last = await this.screen();
          return pattern.test(last) ? last : undefined;
        },
        timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; the screen was:\n${last}`);
    }
  }

  /** Ends the tmux server and everything in it. */
  async kill(): Promise<void> {
    await this.#tmux('kill-server').catch(() => undefined);
  }

  #tmux(...args: string[]) {
    return exec('tmux', ['-L', this.#socket, ...args], { env: { ...process.env, TMUX: '' } });
  }
}
