// The local provider's memory of key → process group, on disk so a restarted worker can still terminate what
// it started.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export type LocalInstanceRecord = {
  /** Leader of the instance's process group. */
  pid: number;
  /** The leader's start time in clock ticks (Linux /proc), to tell our process from a recycled pid. */
  startTime: string | undefined;
  startedAt: string;
  /** The instance's cgroups (launch.cpus, launch.memory_mb), removed once it has ended. */
  cgroups?: string[];
  /** Carried by a slot runner (local-slots.ts): `pid` is the slot's, which outlives the run. */
  slot?: true;
  /** A slot's run: its directory inside the slot, there until the run is over (then moved out). */
  runDir?: string;
};

type State = Record<string, LocalInstanceRecord>;

/** What an update started and holds back until its record is on disk (local-provider.ts). */
export type Held = { release(): void; abandon(): void };

export class LocalStateFile {
  readonly file: string;
  #queue: Promise<unknown> = Promise.resolve();

  readonly #staleMs: number;

  /** `staleMs`: how long a lock left by a killed worker holds up the others. */
  constructor(dir: string, staleMs = 10_000) {
    this.file = path.join(dir, 'local-instances.json');
    this.#staleMs = staleMs;
  }

  async get(key: string): Promise<LocalInstanceRecord | undefined> {
    return (await this.#read())[key];
  }

  /**
   * Runs `fn` with the current state and saves what it returns. Calls in this process run one at a time, and
   * a lock file serialises them with other workers sharing the directory: without it, two workers'
   * read-modify-writes lose each other's records, and a retried provision no longer finds its instance and
   * starts another. `held` (what `fn` started, if anything) is released once the new state is saved, and
   * abandoned when it is not: nothing it started runs unrecorded.
   */
  update<T>(fn: (state: State) => Promise<[State, T, Held?]>): Promise<T> {
    const next = this.#queue.then(async () => {
      await mkdir(path.dirname(this.file), { recursive: true });
      // A lock left by a killed worker goes stale; waiting is bounded well beyond a provision.
      const release = await lockfile.lock(path.dirname(this.file), {
        lockfilePath: `${this.file}.lock`,
        stale: this.#staleMs,
        retries: { retries: 600, minTimeout: 20, maxTimeout: 100 },
      });
      try {
        const [state, result, held] = await fn(await this.#read());
        try {
          await this.#write(state);
        } catch (error) {
          held?.abandon();
          throw error;
        }
        held?.release();
        return result;
      } finally {
        await release();
      }
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
