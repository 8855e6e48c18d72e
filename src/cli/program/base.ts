// The root `assay` command's settings, shared by the whole program (program.ts) and `assay run`'s
// own (main.ts).
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../version.ts';

const EPILOGUE = `
Exit codes: 0 ok, 1 the operation failed, 2 bad usage or configuration, 130 a prompt interrupted;
\`assay run\` exits with its command's code. Every command takes --help. See docs/cli.md.`;

/**
 * The root command without subcommands; errors and help go through `exitOverride`, so main.ts decides the
 * exit code.
 */
export function baseProgram(): Command {
  const program = new Command('assay')
    .description('Assay from the command line: experiments, variations, runs, assets, search')
    // As commander's .version() does, but package.json is read only when asked (not on every `assay run`).
    .option('-V, --version', 'print the version of assay')
    .on('option:version', () => {
      const version = packageVersion();
      process.stdout.write(`${version}\n`);
      throw new CommanderError(0, 'commander.version', version);
    })
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
  return program;
}
