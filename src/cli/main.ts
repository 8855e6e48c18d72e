// The `assay` command: commander parses the arguments against program.ts and runs the chosen action.
import type { Command } from 'commander';

/**
 * `assay run` starts once per managed run, on every instance: it declares itself alone. Declaring the other
 * commands would load the contract's schemas (TypeBox, hundreds of modules) for their choices, most of the
 * runner's start-up.
 */
async function programFor(argv: string[]): Promise<Command> {
  if (argv[0] === 'run') return (await import('./cli-entry.ts')).runProgram();
  return (await import('./program.ts')).buildProgram();
}

const argv = process.argv.slice(2);
// `assay experiments list | head -1`: once the reader has gone, the rest of the answer has nowhere to go. Exit
// 0 at once, as the reader got what it asked for (a pipeline under `set -o pipefail` goes on), instead of
// dying of the unhandled EPIPE with a stack trace. `assay run` is left alone: its command's output is not
// the run's result, and the run must still be reported.
if (argv[0] !== 'run') {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(0);
    });
}
await (await import('./cli-entry.ts')).runCli(argv, () => programFor(argv));
