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
// A local slot's long-lived runner (src/compute/local-slots.ts), when the runner's bundle is not fresh.
if (argv[0] === 'run-slot') await (await import('./run-slot.ts')).runSlot(argv.slice(1));
else await (await import('./cli-entry.ts')).runCli(argv, () => programFor(argv));
