// Argument handling shared by every command: node:util parseArgs, help, and the usage error (exit code 2).
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Bad usage: unknown flag, missing argument, malformed value. main.ts prints it and exits 2. */
export class UsageError extends Error {}

/** The user answered a prompt with Ctrl-C; main.ts exits 130 as a shell would. */
export class Interrupted extends Error {}

/** Prints a command's help on stdout and answers exit code 0. */
export function printUsage(usage: string): number {
  process.stdout.write(usage);
  return 0;
}

/** True when the arguments before any `--` ask for help. */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Strict parseArgs with positionals; `count` bounds how many positionals the command takes. */
export function parseCommand<O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  count: { min: number; max: number } = { min: 0, max: 0 },
) {
  const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  const n = parsed.positionals.length;
  if (n < count.min) throw new UsageError(`missing argument${count.min - n > 1 ? 's' : ''}`);
  if (n > count.max)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[count.max])}`);
  return parsed;
}

/** A whole number ≥ 1 given on the command line (a variation n, a run r, a limit). */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number ≥ 1, got ${JSON.stringify(value)}`);
  return n;
}

/** A positive number of seconds; fractions allowed (tests use short intervals). */
export function positiveSeconds(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s <= 0)
    throw new UsageError(`${name} must be a positive number of seconds, got ${JSON.stringify(value)}`);
  return s;
}

/** A number of seconds ≥ 0. */
export function nonNegativeSeconds(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s < 0)
    throw new UsageError(`${name} must be a number of seconds ≥ 0, got ${JSON.stringify(value)}`);
  return s;
}

/** A command group's subcommands, each taking the arguments after its name and answering the exit code. */
export type Subcommands = Record<string, (args: string[]) => Promise<number>>;

/** Runs `assay <group> <sub> …`: help for the group, or the subcommand; an unknown one is a usage error. */
export async function dispatch(usage: string, subcommands: Subcommands, args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? process.stderr : process.stdout).write(usage);
    return name === undefined ? 2 : 0;
  }
  const run = Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (!run) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  if (wantsHelp(rest)) return printUsage(usage);
  return run(rest);
}

/** The text of a file named on the command line; a missing or unreadable file is a usage error. */
export async function readTextFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
}
