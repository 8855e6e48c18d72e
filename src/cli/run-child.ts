// The command `assay run` supervises: its own process group, signals forwarded to the group, TERM then KILL
// to stop.
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, constants as fs, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import { constants } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** How the command ended: an exit code, or the signal that killed it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the command could not be started at all (not found, not executable). */
  readonly error?: string;
}

export interface Child {
  readonly exited: Promise<ChildExit>;
  /** The command's process id (and process group id); undefined when it could not start. */
  readonly pid: number | undefined;
  /** Its stdout and stderr, when they are captured (`captureIn`), else inherited. */
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Sends a signal to the command and everything it started. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL when it is still alive after `graceMs`; resolves once it has exited. */
  stop(graceMs: number, first?: NodeJS.Signals): Promise<ChildExit>;
}

/** Descriptors of ours the command must not inherit (a local slot's control channel, run-slot.ts). */
let covered: number[] = [];

/**
 * From now on, commands get an empty stdin and /dev/null in place of each of `fds`: a long-lived runner's
 * channel to its provider must not reach the programs it runs (Node leaves inherited descriptors open).
 */
export function coverInheritedFds(fds: number[]): void {
  covered = fds;
}

/**
 * Starts the command in a process group of its own, so a stop reaches the programs it started too (a shell
 * script's python, a launcher's workers), and a terminal's Ctrl-C reaches it once, forwarded by us,
 * not twice.
 */
export function startChild(
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { captureIn?: string } = {},
): Child {
  // Outside the terminal's foreground group, a read from the terminal would stop the command (SIGTTIN) for
  // good; an empty stdin fails fast instead. Piped stdin is passed on.
  const stdin = process.stdin.isTTY || covered.length > 0 ? 'ignore' : 'inherit';
  const fifos = options.captureIn === undefined ? undefined : openFifos(options.captureIn);
  const cover = covered.length > 0 ? openSync('/dev/null', fs.O_RDWR) : undefined;
  const extra: StdioOptions = Array.from({ length: Math.max(2, ...covered) - 2 }, (_, i) =>
    covered.includes(i + 3) ? cover! : 'ignore',
  );
  const stdio: StdioOptions = fifos
    ? [stdin, fifos.write[0], fifos.write[1]]
    : options.captureIn !== undefined
      ? [stdin, 'pipe', 'pipe']
      : [stdin, 'inherit', 'inherit'];
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    stdio: [...stdio, ...extra],
    env,
    detached: true,
  });
  // The command holds the write ends now; ours would keep the pipes open after it exits.
  for (const fd of [...(fifos?.write ?? []), ...(cover === undefined ? [] : [cover])]) closeSync(fd);
  const [stdout, stderr] = fifos
    ? fifos.read.map((fd) => new net.Socket({ fd, readable: true, writable: false }))
    : [child.stdout, child.stderr];
  let done = false;
  const exited = new Promise<ChildExit>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      done = true;
      resolve({
        code: error.code === 'ENOENT' ? 127 : 126,
        signal: null,
        error: `cannot start ${command[0]}: ${error.message}`,
      });
    });
    child.once('exit', (code, signal) => {
      done = true;
      // Whatever the command left behind in its group goes with it: no orphan keeps a GPU or a port.
      killGroup(child.pid, 'SIGKILL');
      resolve({ code, signal });
    });
  });
  const signal = (sig: NodeJS.Signals) => {
    if (!done) killGroup(child.pid, sig);
  };
  return {
    exited,
    pid: child.pid,
    stdout,
    stderr,
    signal,
    async stop(graceMs, first = 'SIGTERM') {
      signal(first);
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Two pipes for stdout and stderr, as named pipes in `dir` (removed once open). Node's own 'pipe' is a socket
 * pair, where each small write of an unbuffered program costs a wake-up of the reader: 100,000 lines of
 * `python -u` take 2–3 s instead of 0.5 s. Undefined when mkfifo is not there (then Node's pipes serve).
 */
function openFifos(dir: string): { read: number[]; write: number[] } | undefined {
  const files = ['stdout', 'stderr'].map((name) => path.join(dir, `${name}.fifo`));
  try {
    execFileSync('mkfifo', ['-m', '600', ...files], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  try {
    // The read end first, without waiting for a writer; then the write end, which finds it.
    const read = files.map((file) => openSync(file, fs.O_RDONLY | fs.O_NONBLOCK));
    const write = files.map((file) => openSync(file, fs.O_WRONLY));
    return { read, write };
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** The exit code a shell would report: the code, or 128 + the signal's number. */
export function exitCodeOf(exit: ChildExit): number {
  if (exit.signal !== null) return 128 + (constants.signals[exit.signal] ?? 0);
  return exit.code ?? 1;
}

/** `exit code 3`, `killed by SIGKILL`: the failure message of a run whose command failed. */
export function describeExit(exit: ChildExit): string {
  if (exit.error !== undefined) return exit.error;
  return exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}
