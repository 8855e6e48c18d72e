// A `local` slot's long-lived runner (`assay run-slot`, started by src/compute/local-slots.ts): one Node
// process that runs managed runs one after another, each exactly as `assay run -- COMMAND` would (same
// options, environment, logs, metrics, heartbeats, cancel), without a Node start-up per run.
// Its channel: jobs and stops arrive on stdin, one JSON object a line; `{ done, code }` goes back on fd 3 once
// a run is over and nothing of it is left. Its stdout and stderr are the current run's console log.
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { CommanderError } from 'commander';
import { runProgram } from './cli-entry.ts';
import { coverInheritedFds } from './run-child.ts';

/** What the provider sends: a run to carry out, or a stop of the current one (a terminate). */
export type SlotMessage =
  | {
      kind: 'run';
      id: string;
      cwd: string;
      env: Record<string, string>;
      /** `assay run`'s options (before `--`). */
      options: string[];
      command: string[];
    }
  | { kind: 'stop'; id: string };

/** What the slot answers once a run is over: `assay run`'s exit code. */
export type SlotReport = { done: string; code: number };

const CHANNEL_FD = 3;

/**
 * Serves runs until stdin closes (the provider's worker is gone: the run in hand is finished first).
 * `ownPidNamespace`: the slot is alone in a PID namespace (its sandbox), so after each run it kills every
 * process left there and empties /tmp, and the next run meets nothing of the last.
 */
export async function runSlot(argv: string[]): Promise<void> {
  const ownPidNamespace = argv.includes('--own-pid-namespace');
  const channel = new net.Socket({ fd: CHANNEL_FD, readable: false, writable: true });
  channel.on('error', () => undefined);
  // The command must not read our jobs or write our reports.
  coverInheritedFds([CHANNEL_FD]);
  // A worker that is gone leaves the pipes closed: the run in hand still ends and is reported.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const base = { ...process.env };
  const queue: Extract<SlotMessage, { kind: 'run' }>[] = [];
  let current: string | undefined;
  let closed = false;
  let wake: () => void = () => undefined;
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const message = JSON.parse(line) as SlotMessage;
    if (message.kind === 'run') queue.push(message);
    // As a SIGTERM to `assay run`: the command gets SIGTERM, then SIGKILL after the grace, the run fails.
    else if (message.id === current) process.emit('SIGTERM', 'SIGTERM');
    wake();
  });
  lines.on('close', () => {
    closed = true;
    wake();
  });
  for (;;) {
    const job = queue.shift();
    if (!job) {
      if (closed) break;
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    current = job.id;
    const code = await runOne(job, base);
    current = undefined;
    if (ownPidNamespace) clearNamespace();
    const report: SlotReport = { done: job.id, code };
    await new Promise((resolve) => channel.write(`${JSON.stringify(report)}\n`, resolve));
  }
  channel.end();
}

/** One run, as `assay run -- COMMAND` in the job's directory and environment (the slot's own is restored). */
async function runOne(job: Extract<SlotMessage, { kind: 'run' }>, base: NodeJS.ProcessEnv): Promise<number> {
  replaceEnv(job.env);
  process.exitCode = undefined;
  try {
    process.chdir(job.cwd);
    // Parsed per run: the options' variables (ASSAY_RUN_GRACE_S, …) are the run's own.
    await runProgram().parseAsync(['run', ...job.options, '--', ...job.command], { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) return 2;
    return (await import('./output.ts')).reportError(error);
  } finally {
    process.exitCode = undefined;
    process.chdir('/');
    replaceEnv(base);
  }
}

function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
  Object.assign(process.env, env);
}

/**
 * Kills every process of the namespace but its init (bwrap) and this one, until none is left (a fork racing
 * a kill is met by the next), then empties /tmp and /dev/shm: all of it is the run user's.
 */
function clearNamespace(): void {
  for (let round = 0; round < 100; round++) {
    if (othersAlive().length === 0) break;
    try {
      process.kill(-1, 'SIGKILL');
    } catch {
      // ESRCH: nobody left to signal.
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
  // Only what the run user owns: the mount points of the slot's own directories are root's.
  for (const dir of ['/tmp', '/dev/shm'])
    for (const entry of safeReaddir(dir)) {
      const file = path.join(dir, entry);
      try {
        if (lstatSync(file).uid === process.getuid?.()) rmSync(file, { recursive: true, force: true });
      } catch {
        // Gone already, or not ours to remove.
      }
    }
}

/** Live processes of the namespace besides its init and this one (zombies are being reaped). */
function othersAlive(): string[] {
  return safeReaddir('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry) || entry === '1' || entry === String(process.pid)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  });
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
