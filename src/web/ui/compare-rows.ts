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

/** Differing config values a legend entry names at most. */
export const LEGEND_PATHS = 4;

/** A run as its legend entry is made: its number and name, and its config flattened. */
export interface LegendRun {
  id: string;
  n: number;
  r: number;
  name: string | null;
  config: Record<string, Cell>;
}

/**
 * Each run's legend entry by run id: the config values that differ between the variations (`lr=0.01,
 * depth=3`); runs sharing them (runs of one variation) are told apart by their name or number, and with no
 * differing value the name or number alone.
 */
export function legendLabels(runs: LegendRun[], configPaths: string[]): Map<string, string> {
  const shown = configPaths.slice(0, LEGEND_PATHS);
  const base = new Map(
    runs.map((run) => {
      const values = shown.map((p) => `${p}=${legendValue(run.config[p])}`);
      if (configPaths.length > LEGEND_PATHS) values.push('…');
      return [run.id, values.join(', ')];
    }),
  );
  const uses = new Map<string, number>();
  for (const label of base.values()) uses.set(label, (uses.get(label) ?? 0) + 1);
  return new Map(
    runs.map((run) => {
      const label = base.get(run.id)!;
      const own = run.name ?? `run ${run.n}.${run.r}`;
      if (label === '') return [run.id, own];
      return [run.id, uses.get(label)! > 1 ? `${label} (${own})` : label];
    }),
  );
}

/** A config value in a legend: numbers to six significant digits, the rest as text. */
function legendValue(value: Cell): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'number') return String(Number(value.toPrecision(6)));
  return String(value);
}
