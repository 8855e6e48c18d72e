// `--set PATH=V1,V2,…` options of `assay sweeps create`, turned into the grid the API takes.
import { UsageError } from './command-args.ts';

const DOTTED_PATH = /^[^.=]+(\.[^.=]+)*$/;

/** A grid from repeated `--set PATH=V1,V2,…`: one axis per option, each path at most once. */
export function gridFromSets(sets: readonly string[]): Record<string, unknown[]> {
  const grid: Record<string, unknown[]> = {};
  for (const set of sets) {
    const eq = set.indexOf('=');
    const key = eq < 0 ? '' : set.slice(0, eq).trim();
    if (!DOTTED_PATH.test(key))
      throw new UsageError(
        `--set ${JSON.stringify(set)}: expected PATH=V1,V2,… with a dotted PATH such as optimizer.lr`,
      );
    if (Object.hasOwn(grid, key))
      throw new UsageError(`--set ${key} given twice: put all its values in one --set`);
    grid[key] = splitValues(set.slice(eq + 1)).map((item) => {
      if (item === '') throw new UsageError(`--set ${JSON.stringify(set)}: empty value`);
      return parseValue(item);
    });
  }
  return grid;
}

/** JSON when it parses (numbers, booleans, null, quoted strings, arrays, objects), else the text itself. */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Splits at the commas outside brackets, braces and double quotes, so `[1,2],[3,4]` is two values. */
export function splitValues(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '[' || c === '{') depth += 1;
    else if ((c === ']' || c === '}') && depth > 0) depth -= 1;
    else if (c === ',' && depth === 0) {
      items.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  items.push(text.slice(start).trim());
  return items;
}
