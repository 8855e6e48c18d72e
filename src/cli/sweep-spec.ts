// `assay sweeps create`'s options turned into the sweep the API takes: which strategy, its points or space,
// its objective, early stopping and retries.
import { parse } from 'yaml';
import {
  EARLY_STOPPING_KINDS,
  GOALS,
  SEARCH_STRATEGIES,
  type EarlyStopping,
  type Goal,
  type SearchStrategy,
} from '@assay/contract';
import type { SweepSpec } from '../client/index.ts';
import { readTextFile, UsageError } from './command-args.ts';
import { gridFromSets } from './sweep-sets.ts';

export interface SweepSpecOptions {
  base?: string;
  grid?: string;
  list?: string;
  set?: string[];
  space?: string;
  strategy?: string;
  trials?: number;
  repeat?: number;
  variations?: string;
  metric?: string;
  goal?: string;
  earlyStopping?: string;
  maxStep?: number;
  maxRetries?: number;
  priority?: number;
  seed?: number;
  concurrency?: number;
  namePrefix?: string;
}

const SOURCES = '--grid FILE, --list FILE, --set PATH=V1,V2,… (which may repeat), --space FILE or --repeat N';

/** The sweep the options describe; a usage error (exit 2) names the option that is wrong or missing. */
export async function sweepSpecOf(o: SweepSpecOptions): Promise<SweepSpec> {
  const given = [o.grid, o.list, o.set, o.space, o.repeat].filter((v) => v !== undefined).length;
  if (given !== 1) throw new UsageError(`give exactly one of ${SOURCES}`);
  if (o.strategy !== undefined && o.space === undefined)
    throw new UsageError('--strategy chooses how --space is searched: give --space FILE with it');
  if (o.trials !== undefined && o.space === undefined)
    throw new UsageError('--trials counts the points drawn from --space: give --space FILE with it');
  if (o.variations !== undefined && o.repeat === undefined)
    throw new UsageError('--variations names what --repeat runs again: give --repeat N with it');
  const tuning = {
    concurrency: o.concurrency,
    objective: objectiveOf(o),
    earlyStopping: earlyStoppingOf(o, await earlyStoppingFile(o.earlyStopping)),
    maxRetries: o.maxRetries,
    priority: o.priority,
  };
  if (o.repeat !== undefined)
    return {
      strategy: 'repeat',
      repeats: o.repeat,
      variations: variationsOf(o.variations),
      seed: o.seed,
      ...tuning,
    };
  if (o.base === undefined) throw new UsageError('--base is required: the base variation config as YAML');
  const base = { baseYaml: await readTextFile(o.base), namePrefix: o.namePrefix, ...tuning };
  if (o.space !== undefined) {
    if (o.trials === undefined) throw new UsageError('--space needs --trials N: how many points to try');
    return {
      ...base,
      strategy: strategyOf(o.strategy),
      space: mappingFile(o.space, parseFile(o.space, await readTextFile(o.space)), 'a search space'),
      trials: o.trials,
      seed: o.seed,
    };
  }
  if (o.seed !== undefined) throw new UsageError('--seed seeds a search (--space) or a repeat (--repeat)');
  if (o.list !== undefined)
    return { ...base, strategy: 'list', list: listFile(o.list, await readJson(o.list)) };
  const grid = o.grid !== undefined ? gridFile(o.grid, await readJson(o.grid)) : gridFromSets(o.set!);
  return { ...base, strategy: 'grid', grid };
}

function strategyOf(strategy = 'random'): SearchStrategy {
  if (!(SEARCH_STRATEGIES as readonly string[]).includes(strategy))
    throw new UsageError(
      `--strategy must be one of ${SEARCH_STRATEGIES.join(', ')}, got ${JSON.stringify(strategy)}`,
    );
  return strategy as SearchStrategy;
}

function objectiveOf(o: SweepSpecOptions) {
  if (o.metric === undefined) {
    if (o.goal !== undefined) throw new UsageError('--goal needs --metric KEY: the metric to optimise');
    if (o.earlyStopping !== undefined)
      throw new UsageError('--early-stopping stops trials by the objective: give --metric KEY with it');
    return undefined;
  }
  const goal = o.goal ?? 'minimize';
  if (!(GOALS as readonly string[]).includes(goal))
    throw new UsageError(`--goal must be minimize or maximize, got ${JSON.stringify(goal)}`);
  return { metric: o.metric, goal: goal as Goal };
}

/** `--early-stopping` names a kind (its defaults, and `--max-step`) or a YAML file holding the whole object. */
async function earlyStoppingFile(value: string | undefined): Promise<unknown> {
  if (value === undefined || Object.hasOwn(EARLY_STOPPING_KINDS, value)) return undefined;
  if (!/[./\\]/.test(value))
    throw new UsageError(
      `--early-stopping takes ${Object.keys(EARLY_STOPPING_KINDS).join(', ')} or a YAML file, got ${JSON.stringify(value)}`,
    );
  return mappingFile(value, parseFile(value, await readTextFile(value)), 'early stopping');
}

function earlyStoppingOf(o: SweepSpecOptions, fromFile: unknown): EarlyStopping | undefined {
  if (o.earlyStopping === undefined) {
    if (o.maxStep !== undefined)
      throw new UsageError('--max-step goes with --early-stopping asha or hyperband');
    return undefined;
  }
  if (fromFile !== undefined) {
    if (o.maxStep !== undefined)
      throw new UsageError('--max-step goes with a kind; the file sets max_step itself');
    return fromFile as EarlyStopping;
  }
  const kind = o.earlyStopping as keyof typeof EARLY_STOPPING_KINDS;
  if (kind === 'median') {
    if (o.maxStep !== undefined) throw new UsageError('--max-step is for asha and hyperband, not median');
    return { kind };
  }
  if (kind === 'hyperband') {
    if (o.maxStep === undefined)
      throw new UsageError('--early-stopping hyperband needs --max-step N: the step a full trial reaches');
    return { kind, max_step: o.maxStep };
  }
  return o.maxStep === undefined ? { kind } : { kind, max_step: o.maxStep };
}

function variationsOf(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const numbers = value.split(',').map((s) => Number(s.trim()));
  if (numbers.some((n) => !Number.isSafeInteger(n) || n < 1))
    throw new UsageError(
      `--variations takes variation numbers separated by commas, e.g. 1,3, got ${JSON.stringify(value)}`,
    );
  return numbers;
}

async function readJson(file: string): Promise<unknown> {
  const text = await readTextFile(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/** A JSON or YAML file (JSON is YAML). */
function parseFile(file: string, text: string): unknown {
  try {
    return parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${file} is not JSON or YAML: ${(error as Error).message}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mappingFile<T>(file: string, value: unknown, what: string): T {
  if (!isObject(value)) throw new UsageError(`${file}: ${what} is a mapping (YAML or JSON object)`);
  return value as T;
}

function gridFile(file: string, value: unknown): Record<string, unknown[]> {
  if (!isObject(value) || Object.values(value).some((v) => !Array.isArray(v))) {
    throw new UsageError(
      `${file}: a grid is a JSON object of dotted paths to arrays of values, e.g. {"optimizer.lr": [1e-4, 3e-4]}`,
    );
  }
  return value as Record<string, unknown[]>;
}

function listFile(file: string, value: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(value) || !value.every(isObject)) {
    throw new UsageError(
      `${file}: a list is a JSON array of objects of dotted paths to values, e.g. [{"optimizer.lr": 1e-4, "seed": 1}]`,
    );
  }
  return value;
}
