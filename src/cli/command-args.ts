// Argument values shared by every command: the usage error (exit code 2) and the checks of numbers and files.
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';

/** Bad usage found by a command itself (a clash, a bad file of the user's). main.ts prints it and exits 2. */
export class UsageError extends Error {}

/** The user answered a prompt with Ctrl-C; main.ts exits 130 as a shell would. */
export class Interrupted extends Error {}

const WHOLE = /^\s*\d+\s*$/;

/** A whole number ≥ 1 from a variable (SERVICE_VARIATION, SERVICE_RUN); `name` says which in the error. */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!WHOLE.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number ≥ 1, got ${JSON.stringify(value)}`);
  return n;
}

// The parsers below are commander's: it names the argument or option in the message and exits 2.

/** A variation n, a run r, a limit, a concurrency. */
export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!WHOLE.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('It must be a whole number ≥ 1.');
  return n;
}

/** A run's priority in the compute queue: a whole number from -100 to 100 (higher first). */
export function priority(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || n < -100 || n > 100)
    throw new InvalidArgumentError('It must be a whole number from -100 to 100.');
  return n;
}

/** A positive number of seconds; fractions allowed (tests use short intervals). */
export function seconds(value: string): number {
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s <= 0)
    throw new InvalidArgumentError('It must be a positive number of seconds.');
  return s;
}

/** A number of seconds ≥ 0. */
export function secondsOrZero(value: string): number {
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s < 0)
    throw new InvalidArgumentError('It must be a number of seconds ≥ 0.');
  return s;
}

/** `--resume-from R` (a run of the same variation) or `N.R` (run R of variation N). */
export function runReference(value: string): { n?: number; r: number } {
  const match = /^\s*(?:(\d+)\.)?(\d+)\s*$/.exec(value);
  const [n, r] = [match?.[1], match?.[2]].map((v) => (v === undefined ? undefined : Number(v)));
  if (r === undefined || r < 1 || (n !== undefined && n < 1))
    throw new InvalidArgumentError('It must be a run number R, or N.R for run R of variation N.');
  return n === undefined ? { r } : { n, r };
}

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
