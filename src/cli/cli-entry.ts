// Parsing and running a command line, shared by the whole CLI (main.ts) and the runner's
// bundle (runner-main.ts).
import { CommanderError, type Command } from 'commander';
import { baseProgram } from './program/base.ts';
import { addRunCommand } from './program/run.ts';

/** `assay run` declared alone: the other commands would load the contract's schemas for their choices. */
export function runProgram(): Command {
  const program = baseProgram();
  addRunCommand(program);
  return program;
}

export async function runCli(argv: string[], program: () => Promise<Command>): Promise<void> {
  onBrokenPipe(argv[0] === 'run');
  try {
    await (await program()).parseAsync(argv, { from: 'user' });
  } catch (error) {
    // Commander has printed its message or the help already; only the exit code is left to choose.
    if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else process.exitCode = (await import('./output.ts')).reportError(error);
  }
}

/**
 * `assay experiments list | head -1`: once the reader has gone, the rest of the answer has nowhere to go. Exit
 * 0 at once, as the reader got what it asked for (a pipeline under `set -o pipefail` goes on), instead of dying
 * of the unhandled EPIPE with a stack trace. `assay run` goes on instead: its own messages are not the run's
 * result, and the run must still end and be reported.
 */
function onBrokenPipe(run: boolean): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (!run) process.exit(0);
    });
}
