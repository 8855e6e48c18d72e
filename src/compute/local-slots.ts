// `local`'s long-lived runners: one Node process per concurrent run (`assay run-slot`, src/cli/run-slot.ts),
// started on demand, sandboxed as the run user like a spawned instance, carrying one run at a time. A managed
// run then costs a JSON line instead of a Node start-up (bwrap, setpriv, Node, `assay run`'s modules).
// docs/production.md ("Slot runners") gives the security argument: what one run could leave for the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, chown, mkdir, readdir, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { sandboxArgs, type LocalSandbox } from './local-sandbox.ts';
import { processStartTime } from './process-liveness.ts';
import { runnerEntry } from './runner-bundle.ts';

export type LocalSlotsOptions = {
  stateDir: string;
  sandbox?: LocalSandbox;
  /** Directories a sandboxed slot never sees (the service's data dir, the state dir). */
  hidden: string[];
  /** The slot process's own environment (the basics; a run's own comes with it). */
  env: Record<string, string>;
  /** `assay run`'s options for every run. */
  runOptions: string[];
};

type Slot = {
  /** Whose code it has run: it takes no one else's run (see `start`); undefined: a spare, nobody's yet. */
  tenant: string | undefined;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly startTime: string | undefined;
  /** Bound into the sandbox: root's, holding the current run's directory (the run user's). */
  readonly dir: string;
  /** The run it carries, until it reports the run over (or dies). */
  running: string | undefined;
  /** Until the last run's directory is moved out, no next run. */
  free: boolean;
  log: WriteStream | undefined;
  readonly exited: Promise<void>;
  readonly over: Map<string, () => void>;
};

/** Fresh slots kept started beside the busy ones (about 50 MiB each while idle). */
const SPARES = 4;

export class LocalSlots {
  readonly #options: LocalSlotsOptions;
  readonly #slots = new Set<Slot>();
  #count = 0;
  #refilling = false;

  constructor(options: LocalSlotsOptions) {
    this.#options = options;
  }

  /**
   * Hands the run to a free slot of the same tenant (a new one when none is): the slot's pid and start time,
   * for the record. `tenant` names whose code the run runs (the launch block's author and the experiment);
   * undefined: nobody's in particular, so the slot is never reused. A free slot of another tenant makes room.
   * The slot gets the run on `release` (once it is recorded); `abandon` frees it again.
   */
  async start(
    key: string,
    name: string,
    tenant: string | undefined,
    env: Record<string, string>,
    command: string[],
  ): Promise<{
    pid: number;
    startTime: string | undefined;
    runDir: string;
    release(): void;
    abandon(): void;
  }> {
    const free = [...this.#slots].filter((s) => s.free);
    const owner = tenant ?? `once:${key}`;
    let slot =
      (tenant === undefined ? undefined : free.find((s) => s.tenant === tenant)) ??
      free.find((s) => s.tenant === undefined);
    if (slot) {
      slot.free = false;
      slot.tenant = owner;
    } else {
      const other = free[0];
      if (other) {
        other.free = false;
        other.child.stdin!.end();
      }
      slot = await this.#spawn(owner);
    }
    void this.#refill();
    const cwd = path.join(slot.dir, name);
    await rm(cwd, { recursive: true, force: true });
    await mkdir(cwd);
    const { sandbox } = this.#options;
    if (sandbox?.mode === 'bwrap') {
      await chown(cwd, sandbox.runAs.uid, sandbox.runAs.gid);
      Object.assign(env, { HOME: cwd, TMPDIR: '/tmp' });
    }
    slot.log?.end();
    slot.log = createWriteStream(path.join(this.#options.stateDir, `${name}.log`), {
      flags: 'a',
      mode: 0o600,
    });
    slot.running = key;
    const run = { kind: 'run', id: key, cwd, env, options: this.#options.runOptions, command };
    const chosen = slot;
    return {
      pid: slot.pid,
      startTime: slot.startTime,
      runDir: cwd,
      release: () => chosen.child.stdin!.write(`${JSON.stringify(run)}\n`),
      abandon: () => void this.#over(chosen, false),
    };
  }

  /** The run's state when `pid` is a slot of ours, else undefined (another process's, or a spawned instance). */
  state(key: string, pid: number): 'running' | 'terminated' | undefined {
    const slot = this.#of(pid);
    if (!slot) return undefined;
    return slot.running === key ? 'running' : 'terminated';
  }

  /**
   * Stops the run as a SIGTERM stops `assay run`; a slot that has not reported it over within `graceMs` is
   * killed (the next run gets a new one). False when `pid` is not a slot of ours.
   */
  async stop(key: string, pid: number, graceMs: number): Promise<boolean> {
    const slot = this.#of(pid);
    if (!slot) return false;
    if (slot.running !== key) return true;
    const over = new Promise<void>((resolve) => slot.over.set(key, resolve));
    slot.child.stdin!.write(`${JSON.stringify({ kind: 'stop', id: key })}\n`);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      over.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
    ]);
    clearTimeout(timer);
    if (late) {
      try {
        process.kill(-slot.pid, 'SIGKILL');
      } catch {
        // ESRCH: gone already.
      }
      await slot.exited;
    }
    return true;
  }

  /**
   * Keeps SPARES fresh slots started (they have run nobody's code, so any tenant may take one): a run then
   * finds its runner up, and a sweep's first wave waits for no Node start-up. Started on the first run.
   */
  async #refill(): Promise<void> {
    if (this.#refilling) return;
    this.#refilling = true;
    try {
      while ([...this.#slots].filter((s) => s.tenant === undefined).length < SPARES) {
        const spare = await this.#spawn(undefined);
        spare.free = true;
      }
    } catch {
      // A spare that cannot start now: the next run starts its own and says why.
    } finally {
      this.#refilling = false;
    }
  }

  #of(pid: number): Slot | undefined {
    return [...this.#slots].find((s) => s.pid === pid);
  }

  async #spawn(tenant: string | undefined): Promise<Slot> {
    const { sandbox, stateDir } = this.#options;
    const dir = path.join(stateDir, 'slots', `${process.pid}-${this.#count++}`);
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    const real = await realpath(dir);
    const sandboxed = sandbox?.mode === 'bwrap';
    const runner = [
      process.execPath,
      runnerEntry(),
      'run-slot',
      ...(sandboxed ? ['--own-pid-namespace'] : []),
    ];
    const argv = sandboxed
      ? [
          sandbox.bwrap,
          ...sandboxArgs(sandbox, {
            argv: runner,
            cwd: real,
            hidden: this.#options.hidden,
          }),
        ]
      : runner;
    const env = sandboxed ? { ...this.#options.env, HOME: real, TMPDIR: '/tmp' } : this.#options.env;
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: real,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid!));
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const slot: Slot = {
      tenant,
      child,
      pid,
      startTime: processStartTime(pid),
      dir: real,
      running: undefined,
      free: false,
      log: undefined,
      exited,
      over: new Map(),
    };
    this.#slots.add(slot);
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk) => slot.log?.write(chunk));
    const reports = readline.createInterface({ input: child.stdio[3] as NodeJS.ReadableStream });
    reports.on('line', (line) => {
      let report: { done?: unknown };
      try {
        report = JSON.parse(line) as { done?: unknown };
      } catch {
        return;
      }
      if (report.done !== slot.running || slot.running === undefined) return;
      void this.#over(slot, false);
    });
    child.stdin!.on('error', () => undefined);
    void exited.then(() => {
      this.#slots.delete(slot);
      void this.#over(slot, true);
    });
    // The slots never keep the worker's process alive; once it is gone they finish the run in hand and end.
    child.unref();
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    return slot;
  }

  /** The run is over: its directory leaves the slot (the next run must not find it), then the slot is free. */
  async #over(slot: Slot, dead: boolean): Promise<void> {
    const key = slot.running;
    slot.running = undefined;
    if (key !== undefined) {
      slot.over.get(key)?.();
      slot.over.delete(key);
    }
    const runs = await readdirSafe(slot.dir);
    const kept = path.join(this.#options.stateDir, 'instances');
    await mkdir(kept, { recursive: true });
    for (const name of runs) {
      const from = path.join(slot.dir, name);
      await rm(path.join(kept, name), { recursive: true, force: true });
      await rename(from, path.join(kept, name)).catch(() => rm(from, { recursive: true, force: true }));
    }
    if (dead) {
      slot.log?.end();
      await rm(slot.dir, { recursive: true, force: true });
    } else slot.free = true;
  }
}

async function readdirSafe(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}
