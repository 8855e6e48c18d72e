// The `assay` command tree, declared with commander: every command, its arguments, options and help text.
// Declaring loads no command's module; an action imports its own when it runs, so `assay run` starts fast.
import { Command } from 'commander';
import { addAssetsCommands } from './program/assets.ts';
import { addAuthCommands } from './program/auth.ts';
import { addExperimentsCommands } from './program/experiments.ts';
import { addOperatorCommands } from './program/operators.ts';
import { addRunCommand } from './program/run.ts';
import { addRunsCommands } from './program/runs.ts';
import { addSearchCommand } from './program/search.ts';
import { addSweepsCommands } from './program/sweeps.ts';
import { addVariationsCommands } from './program/variations.ts';

const EPILOGUE = `
Exit codes: 0 ok, 1 the operation failed, 2 bad usage or configuration, 130 a prompt interrupted;
\`assay run\` exits with its command's code. Every command takes --help. See docs/cli.md.`;

/** The program; errors and help go through `exitOverride`, so main.ts decides the exit code. */
export function buildProgram(): Command {
  const program = new Command('assay')
    .description('Assay from the command line: experiments, variations, runs, assets, search')
    // Settings below are inherited by every command declared after them.
    .exitOverride()
    // One line per error: "assay: unknown option '--bogus'", a suggestion on the same line.
    .configureOutput({
      outputError: (message, write) =>
        write(
          `${message
            .trimEnd()
            .replace(/^error: /, 'assay: ')
            .replace(/\n+/g, ' ')}\n`,
        ),
    })
    // `assay run` passes the options after its command through to it.
    .enablePositionalOptions()
    .addHelpText('after', EPILOGUE);

  program.commandsGroup('Researchers:');
  addAuthCommands(program);
  addExperimentsCommands(program);
  addVariationsCommands(program);
  addRunsCommands(program);
  addSweepsCommands(program);
  addAssetsCommands(program);
  addSearchCommand(program);
  program.commandsGroup('Runners:');
  addRunCommand(program);
  program.commandsGroup('Operators:');
  addOperatorCommands(program);
  return program;
}
