// `--set PATH=V1,V2,…` options of `assay sweeps create`, turned into the grid the API takes.
import { parseSweepValues } from '../client/sweep-values.ts';
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
    try {
      grid[key] = parseSweepValues(set.slice(eq + 1));
    } catch (error) {
      throw new UsageError(`--set ${JSON.stringify(set)}: ${(error as Error).message}`);
    }
  }
  return grid;
}
