import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';

export type ProcessGroupOptions = {
  /** Short name used in error messages. */
  name: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Files and directories to delete once the group is dead (temp dirs, sockets the server leaves behind). */
  cleanupPaths?: string[];
  /** How long stop() waits after SIGTERM before SIGKILL; 0 kills at once. */
  stopGraceMs?: number;
};

export type ProcessGroup = {
  readonly name: string;
  readonly pid: number;
  /** Resolves once the leader has exited, with a description of how. */
  readonly exited: Promise<string>;
  isRunning(): boolean;
  /** The tail of stdout and stderr, interleaved. */
  output(): string;
  stop(): Promise<void>;
};

const outputLimit = 64 * 1024;
const live = new Set<{ pid: number; cleanupPaths: string[] }>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

// Servers run in their own process groups, so neither a terminal's Ctrl-C nor the test runner's kill
// reaches them: the test process must take them down itself on every way out.
function killAllSync(): void {
  for (const entry of live) {
    killGroup(entry.pid, 'SIGKILL');
    for (const path of entry.cleanupPaths) rmSync(path, { recursive: true, force: true });
  }
  live.clear();
}

let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAllSync();
      // Re-raise for the default exit only when nobody else (e.g. the test runner) handles the signal.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** Starts a server in its own process group, keeping its output for error messages. */
export function spawnProcessGroup(
  command: string,
  args: string[],
  options: ProcessGroupOptions,
): ProcessGroup {
  installExitHandlers();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-outputLimit);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  // A forgotten stop() must not keep the test process alive; the exit handler still kills the group.
  child.unref();
  (child.stdout as Socket).unref();
  (child.stderr as Socket).unref();

  let running = true;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => {
      running = false;
      resolve(`failed to start: ${error.message}`);
    });
    child.once('exit', (code, signal) => {
      running = false;
      resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
    });
  });

  const pid = child.pid ?? -1;
  const entry = { pid, cleanupPaths: options.cleanupPaths ?? [] };
  if (pid > 0) live.add(entry);

  const stop = async (): Promise<void> => {
    if (pid > 0) {
      // Unreferenced, the child would let the event loop end before its exit is seen.
      child.ref();
      const grace = options.stopGraceMs ?? 2_000;
      if (running && grace > 0) {
        killGroup(pid, 'SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, grace)))]);
        clearTimeout(timer);
      }
      // Also takes down helpers that outlive a leader which exited on its own.
      killGroup(pid, 'SIGKILL');
      await exited;
    }
    live.delete(entry);
    await Promise.all(entry.cleanupPaths.map((path) => rm(path, { recursive: true, force: true })));
  };

  return { name: options.name, pid, exited, isRunning: () => running, output: () => output, stop };
}
