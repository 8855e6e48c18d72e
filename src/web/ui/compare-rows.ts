// The compare table's data: each run's config flattened to dotted paths, the paths whose values differ, and
// the ordering of rows by any column.

export type Cell = string | number | boolean | null | undefined;

/** A JSON object as dotted path → leaf; arrays and other non-objects are leaves (arrays shown as JSON). */
export function flatten(value: unknown, prefix = '', into: Record<string, Cell> = {}): Record<string, Cell> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, into);
  } else if (prefix) {
    into[prefix] = Array.isArray(value) ? JSON.stringify(value) : (value as Cell);
  }
  return into;
}

/** The paths whose value is not the same in every one of `configs` (a path missing from some counts). */
export function differingPaths(configs: Array<Record<string, Cell>>): string[] {
  const paths = new Set(configs.flatMap((c) => Object.keys(c)));
  return [...paths]
    .filter((p) => new Set(configs.map((c) => JSON.stringify(c[p] ?? null))).size > 1)
    .sort((a, b) => a.localeCompare(b));
}

/** Every path any of `values` has, sorted. */
export function allPaths(values: Array<Record<string, Cell>>): string[] {
  return [...new Set(values.flatMap((v) => Object.keys(v)))].sort((a, b) => a.localeCompare(b));
}

/**
 * Columns the compare table takes from runs' `metrics.json` outputs: a file of thousands of figures would
 * make a table no one reads and thousands of cells per row.
 */
export const MAX_METRICS_JSON_COLUMNS = 50;

/** The first `max` of `paths` (sorted as allPaths sorts them), and how many there were. */
export function capPaths(
  paths: string[],
  max = MAX_METRICS_JSON_COLUMNS,
): { shown: string[]; total: number } {
  return { shown: paths.slice(0, max), total: paths.length };
}

/** Numbers by value, everything else as text; an absent value sorts last whichever the direction. */
export function compareCells(a: Cell, b: Cell, direction: 'ascending' | 'descending'): number {
  const absentA = a === undefined || a === null;
  const absentB = b === undefined || b === null;
  if (absentA || absentB) return absentA === absentB ? 0 : absentA ? 1 : -1;
  const order =
    typeof a === 'number' && typeof b === 'number'
      ? a - b
      : String(a).localeCompare(String(b), undefined, { numeric: true });
  return direction === 'ascending' ? order : -order;
}
