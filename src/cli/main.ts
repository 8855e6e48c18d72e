// The `assay` command: commander parses the arguments against program.ts and runs the chosen action.
import { CommanderError } from 'commander';
import { buildProgram } from './program.ts';

async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
  } catch (error) {
    // Commander has printed its message or the help already; only the exit code is left to choose.
    if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else process.exitCode = (await import('./output.ts')).reportError(error);
  }
}

await main(process.argv.slice(2));
