// The `assay` command: commander parses the arguments against program.ts and runs the chosen action.
import { CommanderError, type Command } from 'commander';

/**
 * `assay run` starts once per managed run, on every instance: it declares itself alone. Declaring the other
 * commands would load the contract's schemas (TypeBox, hundreds of modules) for their choices, most of the
 * runner's start-up.
 */
async function programFor(argv: string[]): Promise<Command> {
  if (argv[0] === 'run') {
    const [{ baseProgram }, { addRunCommand }] = await Promise.all([
      import('./program/base.ts'),
      import('./program/run.ts'),
    ]);
    const program = baseProgram();
    addRunCommand(program);
    return program;
  }
  return (await import('./program.ts')).buildProgram();
}

async function main(argv: string[]): Promise<void> {
  try {
    await (await programFor(argv)).parseAsync(argv, { from: 'user' });
  } catch (error) {
    // Commander has printed its message or the help already; only the exit code is left to choose.
    if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
    else process.exitCode = (await import('./output.ts')).reportError(error);
  }
}

await main(process.argv.slice(2));
