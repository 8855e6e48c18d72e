// The local provider's memory of key → process group, on disk so a restarted worker can still terminate what it started.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type LocalInstanceRecord = {
  /** Leader of the instance's process group. */
  pid: number;
  /** The leader's start time in clock ticks (Linux /proc), to tell our process from a recycled pid. */
  startTime: string | undefined;
  startedAt: string;
};

type State = Record<string, LocalInstanceRecord>;

export class LocalStateFile {
  readonly file: string;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(dir: string) {
    this.file = path.join(dir, 'local-instances.json');
  }

  async get(key: string): Promise<LocalInstanceRecord | undefined> {
    return (await this.#read())[key];
  }

  /** Runs `fn` with the current state and saves what it returns; calls in this process run one at a time. */
  update<T>(fn: (state: State) => Promise<[State, T]>): Promise<T> {
    const next = this.#queue.then(async () => {
      const [state, result] = await fn(await this.#read());
      await this.#write(state);
      return result;
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #read(): Promise<State> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as State;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  }

  // Write then rename: a reader in another process sees the old state or the new one, never half of one.
  async #write(state: State): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${randomUUID()}.tmp`;
    await writeFile(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
    await rename(tmp, this.file);
  }
}
