// `assay runs compare EXP [--sweep S] [--keys k1,k2]`: an experiment's runs side by side, each with the
// config values that differ between them and its metrics' last values, from the experiment-wide endpoints
// (the variations, GET /experiments/{id}/runs, GET /experiments/{id}/metrics, a sweep's runs and objective).
import type { RunMetricFigures, VariationData } from '../client/index.ts';
import { MAX_METRIC_KEYS_PER_QUERY } from '@assay/contract/metric-values';
import { openClient } from './cli-client.ts';
import { UsageError } from './command-args.ts';
import { printJson, printTable, type Column } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';

export interface CompareOptions extends JsonOptions {
  sweep?: string;
  keys?: string;
  digits?: number;
}

/** Significant digits of the numbers in the table (the JSON form has them whole). */
export const DEFAULT_DIGITS = 5;
/** Metric keys shown when --keys does not pick them: the first ones in byte order, `system/` left out. */
const DEFAULT_KEY_COUNT = 4;
/** Config columns at most; the JSON form has every differing value. */
const MAX_CONFIG_COLUMNS = 8;
/** Runs read a page at a time (the endpoint's most). */
const PAGE_LIMIT = 200;

/** One run of the comparison: the `--json` form's items. */
export interface ComparedRun {
  n: number;
  r: number;
  run_id: string;
  variation: string;
  state: string;
  /** The config values (dotted path → value) that differ between the compared runs' variations. */
  config: Record<string, unknown>;
  /** Each compared key's figures; null when the run logged none of it. */
  metrics: Record<string, RunMetricFigures | null>;
}

export interface Comparison {
  experiment_id: string;
  sweep_id: string | null;
  objective: { metric: string; goal: string } | null;
  keys: string[];
  config_keys: string[];
  runs: ComparedRun[];
}

export async function compare(experimentId: string, values: CompareOptions): Promise<number> {
  const comparison = await buildComparison(experimentId, values);
  if (values.json) {
    printJson(comparison);
    return 0;
  }
  const digits = values.digits ?? DEFAULT_DIGITS;
  const shownConfig = comparison.config_keys.slice(0, MAX_CONFIG_COLUMNS);
  const columns: Column<ComparedRun>[] = [
    ['N', (run) => run.n],
    ['VARIATION', (run) => run.variation],
    ['R', (run) => run.r],
    ['STATE', (run) => run.state],
    ...shownConfig.map((path): Column<ComparedRun> => [path, (run) => cell(run.config[path], digits)]),
    ...comparison.keys.map((key): Column<ComparedRun> => [
      comparison.objective?.metric === key ? `${key} (${comparison.objective.goal})` : key,
      (run) => cell(run.metrics[key]?.last, digits),
    ]),
  ];
  if (comparison.runs.length === 0) process.stderr.write('no runs to compare\n');
  else printTable(comparison.runs, columns);
  const hidden = comparison.config_keys.length - shownConfig.length;
  if (hidden > 0) process.stderr.write(`(${hidden} more differing config values: --json has them all)\n`);
  if (comparison.keys.length === 0)
    process.stderr.write('(no metrics logged yet: --keys k1,k2 names the keys to show)\n');
  return 0;
}

/** The comparison as `--json` prints it. */
export async function buildComparison(experimentId: string, values: CompareOptions): Promise<Comparison> {
  const { client } = openClient();
  const asked = parseKeys(values.keys);
  const [variations, sweep] = await Promise.all([
    client.variations.list(experimentId),
    values.sweep === undefined ? undefined : client.sweeps.get(experimentId, values.sweep),
  ]);
  const objective = sweep?.declaration.objective ?? null;
  // One experiment-wide list, archived runs left out (as the compare page does); a sweep keeps its own.
  const listed: Array<{ n: number; r: number; id: string; state: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await client.runs.listForExperiment(experimentId, { limit: PAGE_LIMIT, cursor });
    listed.push(...page.items.map((run) => ({ n: run.n, r: run.r, id: run.id, state: run.state })));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  const inSweep = sweep && new Set(sweep.runs.map((run) => run.id));
  const runs = inSweep ? listed.filter((run) => inSweep.has(run.id)) : listed;
  runs.sort((a, b) => a.n - b.n || a.r - b.r);

  let keys = asked ?? (await defaultKeys(client, experimentId));
  // A sweep is judged by its objective: first, whatever else is shown.
  if (objective) keys = [objective.metric, ...keys.filter((k) => k !== objective.metric)];
  if (keys.length > MAX_METRIC_KEYS_PER_QUERY)
    throw new UsageError(`--keys names at most ${MAX_METRIC_KEYS_PER_QUERY} keys, got ${keys.length}`);
  const figures = new Map<string, Record<string, RunMetricFigures>>();
  if (keys.length > 0 && runs.length > 0)
    for (const item of (await client.experiments.metrics(experimentId, keys)).items)
      figures.set(item.run_id, item.metrics);

  const byN = new Map(variations.map((v) => [v.n, v]));
  const configs = new Map(variations.map((v) => [v.n, flatten(v.config_json)]));
  const compared = [...new Set(runs.map((run) => run.n))];
  const configKeys = differingPaths(compared.map((n) => configs.get(n) ?? {}));
  return {
    experiment_id: experimentId,
    sweep_id: sweep?.id ?? null,
    objective: objective && { metric: objective.metric, goal: objective.goal },
    keys,
    config_keys: configKeys,
    runs: runs.map((run) => {
      const config = configs.get(run.n) ?? {};
      const logged = figures.get(run.id) ?? {};
      return {
        n: run.n,
        r: run.r,
        run_id: run.id,
        variation: variationName(byN.get(run.n)),
        state: run.state,
        config: Object.fromEntries(configKeys.map((path) => [path, config[path] ?? null])),
        metrics: Object.fromEntries(keys.map((key) => [key, logged[key] ?? null])),
      };
    }),
  };
}

/**
 * A number to `digits` significant digits, the shortest way JavaScript writes it (0.00031623, 1.2346e-7,
 * 123460); whole numbers below a million stay whole, as steps and counts are.
 */
export function significant(value: number, digits: number = DEFAULT_DIGITS): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
  return String(Number(value.toPrecision(digits)));
}

function cell(value: unknown, digits: number): unknown {
  return typeof value === 'number' ? significant(value, digits) : value;
}

function parseKeys(keys: string | undefined): string[] | undefined {
  if (keys === undefined) return undefined;
  const list = [...new Set(keys.split(',').map((k) => k.trim()))].filter((k) => k !== '');
  if (list.length === 0)
    throw new UsageError('--keys names no key: give them comma-separated, e.g. loss,acc');
  return list;
}

async function defaultKeys(client: ReturnType<typeof openClient>['client'], experimentId: string) {
  const page = await client.experiments.metricKeys(experimentId);
  return page.items
    .map((item) => item.key)
    .filter((key) => !key.startsWith('system/'))
    .slice(0, DEFAULT_KEY_COUNT);
}

function variationName(variation: VariationData | undefined): string {
  return variation?.name ?? '';
}

/** Nested objects as dotted paths (`optimizer.lr`); arrays and other values are leaves. */
export function flatten(value: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const path = prefix + key;
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner))
      Object.assign(flat, flatten(inner as Record<string, unknown>, `${path}.`));
    else flat[path] = inner;
  }
  return flat;
}

/** The paths whose values are not the same in every config (absent counts as a value), sorted. */
export function differingPaths(configs: ReadonlyArray<Record<string, unknown>>): string[] {
  const paths = new Set(configs.flatMap((c) => Object.keys(c)));
  return [...paths]
    .filter((path) => new Set(configs.map((c) => JSON.stringify(c[path] ?? null))).size > 1)
    .sort();
}
