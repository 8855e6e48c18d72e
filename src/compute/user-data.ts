// The boot script of an EC2 run instance: it installs nothing (the image carries `assay`), it only starts
// the runner.
import { commandArgv, LaunchConfigError } from './compute-provider.ts';

export type UserDataInput = {
  /** Exported before the runner starts: launch_config.env under the injected SERVICE_* variables. */
  env: Record<string, string>;
  command: string | string[];
  /** The runner as found on the image. */
  runner?: string;
  /** Where the runner starts (its ./outputs lives there). */
  workDir?: string;
};

/** Quotes one word for bash: single quotes, each embedded quote closed, escaped and reopened. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * `export NAME='value'` lines for a bash script; a name that is not a plain identifier or a value with a NUL
 * byte is refused (LaunchConfigError). Shared by the EC2 user data and the Slurm job script.
 */
export function exportLines(env: Record<string, string>): string[] {
  return Object.entries(env).map(([name, value]) => {
    // A name is spliced unquoted into `export`, so only a plain identifier may pass.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new LaunchConfigError(`not a valid environment variable name: ${JSON.stringify(name)}`);
    if (value.includes('\0')) throw new LaunchConfigError(`environment variable ${name} holds a NUL byte`);
    return `export ${name}=${shellQuote(value)}`;
  });
}

/** `exec <runner> run -- <command>`, every word quoted; a command word with a NUL byte is refused. */
export function execRunnerLine(runner: readonly string[], command: string | string[]): string {
  const argv = commandArgv(command);
  if (argv.some((word) => word.includes('\0')))
    throw new LaunchConfigError('launch_config.command holds a NUL byte');
  return `exec ${[...runner, 'run', '--', ...argv].map(shellQuote).join(' ')}`;
}

/** The user data as a bash script (plain text; the provider base64-encodes it for RunInstances). */
export function buildUserData(input: UserDataInput): string {
  const exports = exportLines(input.env);
  const workDir = input.workDir ?? '/var/lib/assay';
  return [
    '#!/bin/bash',
    '# Assay managed run: start the runner with the injected variables; nothing is installed.',
    'set -euo pipefail',
    // cloud-init logs the script's output, never its text: nothing here echoes the variables.
    'umask 077',
    ...exports,
    // A shutdown's SIGTERM (a spot interruption, a stop from the console) says the instance is going away:
    // the runner leaves the run to the saga, which recovers it (docs/cli.md, --on-signal).
    'export ASSAY_RUN_ON_SIGNAL=leave',
    `mkdir -p ${shellQuote(workDir)}`,
    `cd ${shellQuote(workDir)}`,
    execRunnerLine([input.runner ?? 'assay'], input.command),
    '',
  ].join('\n');
}
