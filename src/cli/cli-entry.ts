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
  try {
    await (await program()).parseAsync(argv, { from: 'user' });
  } catch (error) {
    // Commander has printed its message or the help already; only the exit code is left to choose.
    if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else process.exitCode = (await import('./output.ts')).reportError(error);
  }
}
