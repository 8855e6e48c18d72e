// How commands print: aligned tables and `key  value` fields for people, JSON for scripts, errors on stderr.
import { APIError, ConfigError, ServiceError } from '../client/index.ts';
import { Interrupted, UsageError } from './command-args.ts';
import { unreachableLine } from './unreachable.ts';

/** A column of a table: its header and how to get the cell from a row. */
export type Column<T> = readonly [header: string, value: (row: T) => unknown];

const MAX_CELL = 60;

/** Pretty-printed JSON on stdout: the `--json` form of every command, the API's own objects. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A table with a header row; long cells are cut (the JSON form has them whole). */
export function printTable<T>(rows: readonly T[], columns: readonly Column<T>[]): void {
  const cells = rows.map((row) => columns.map(([, get]) => clip(text(get(row)))));
  const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(columns.map(([h]) => h)), ...cells.map(line)].join('\n')}\n`);
}

/** One `name  value` line per field, names aligned; for `show` commands. */
export function printFields(fields: ReadonlyArray<readonly [string, unknown]>): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  process.stdout.write(
    fields.map(([name, value]) => `${name.padEnd(width)}  ${text(value)}`).join('\n') + '\n',
  );
}

/** A cell's text: '-' for nothing, timestamps without fractions, objects as compact JSON. */
export function text(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string')
    return /^\d{4}-\d\d-\d\dT[\d:]+(\.\d+)?(Z|[+-][\d:]+)$/.test(value) ? time(value) : value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function time(iso: string): string {
  return iso
    .replace('T', ' ')
    .replace(/\.\d+/, '')
    .replace(/(\+00:00|Z)$/, 'Z');
}

function clip(value: string): string {
  const flat = value.replace(/\s+/g, ' ');
  return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat;
}

/**
 * Prints an error the way every command does and answers the exit code: 1 operation failed, 2 usage or
 * config, 130 interrupted.
 */
export function reportError(error: unknown): number {
  if (error instanceof Interrupted) {
    process.stderr.write('\ninterrupted\n');
    return 130;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`assay: ${error.message}\n`);
    return 2;
  }
  if (isParseArgsError(error)) {
    process.stderr.write(`assay: ${(error as Error).message}; see --help\n`);
    return 2;
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  const unreachable = unreachableLine(error);
  process.stderr.write(unreachable ? `assay: ${unreachable}\n` : `error: ${errorLine(error)}\n`);
  return 1;
}

/** `<message> (<code>, request <id>)` for API errors, the message otherwise. */
export function errorLine(error: unknown): string {
  if (error instanceof APIError)
    return `${error.message} (${error.code}, request ${error.requestId ?? 'unknown'})`;
  if (error instanceof ServiceError || error instanceof Error) return error.message;
  return String(error);
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}
