import type {
  EarlyStopping,
  Objective,
  Page,
  SearchSpace,
  Sweep,
  SweepStrategy,
  SweepSummary,
} from '@assay/contract';
import { path, query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type {
  Distribution,
  EarlyStopping,
  Objective,
  SearchSpace,
  SweepBest,
  SweepDeclaration,
  SweepRun,
  SweepRunCounts,
  SweepStrategy,
  SweepSummary,
} from '@assay/contract';

/** A sweep as the service answers it: its declaration, its runs, the progress counted from them, the best. */
export type SweepData = Sweep;

/** What every sweep may add to its strategy. */
interface SweepTuning {
  /** How many of the sweep's runs may be in flight at once; the server's default (4) when left out. */
  concurrency?: number;
  /** The metric the sweep optimises and its goal: each trial's result is the last value its run logged. */
  objective?: Objective;
  /** Stops trials early by the objective (`asha`, `hyperband`, `median`); needs `objective`. */
  earlyStopping?: EarlyStopping;
  /** New runs of a trial that failed crash, heartbeat_timeout, provision_failed or preempted (default 0). */
  maxRetries?: number;
  /** Every run's priority in the compute queue (-100 to 100, higher first; default 0). */
  priority?: number;
}

/** What a sweep that makes variations takes: the base config they change. */
interface SweepBase extends SweepTuning {
  /**
   * The base variation config, YAML as a variation takes it (top-level `launch:` and `accelerate:` included).
   */
  baseYaml: string;
  /** Prefix of the generated variation names. */
  namePrefix?: string;
}

/**
 * What to sweep, by strategy. Each key of `grid`, `list` and `space` is a dotted path into the base YAML
 * (`optimizer.lr`): `grid` takes every combination of its values, `list` one variation per entry, and
 * `random`, `sobol` and `tpe` draw `trials` points from `space`. `repeat` runs a committed experiment's
 * variations again, `repeats` times each (with a distinct seed per repeat). `strategy` may be left out for a
 * grid or a list: the field given names it.
 */
export type SweepSpec =
  | (SweepBase & { strategy?: 'grid'; grid: Record<string, unknown[]>; list?: undefined })
  | (SweepBase & { strategy?: 'list'; list: Array<Record<string, unknown>>; grid?: undefined })
  | (SweepBase & {
      strategy: 'random' | 'sobol' | 'tpe';
      space: SearchSpace;
      trials: number;
      /** The same seed and the same results give the same suggestions; the server picks one when absent. */
      seed?: number;
    })
  | (SweepTuning & {
      strategy: 'repeat';
      repeats: number;
      /** The variations to repeat, by number; every variation when absent. */
      variations?: number[];
      seed?: number;
    });

/** One page of an experiment's sweeps. */
export interface ListSweepsParams {
  limit?: number;
  cursor?: string;
}

/**
 * The sweeps namespace: sweeps that enumerate (grid, list), search (random, sobol, tpe) or repeat, each trial
 * run as a managed run by a sweep workflow with bounded concurrency. Needs a server with an orchestrator
 * (ServerError 503 otherwise).
 */
export class Sweeps {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Declares the sweep and starts its workflow; a grid or list makes all its variations at once. */
  create(experimentId: string, spec: SweepSpec): Promise<SweepData> {
    return this.#t.post(path`/experiments/${experimentId}/sweeps`, sweepBody(spec));
  }

  /** One page of the experiment's sweeps, newest first, each with its progress and best objective value. */
  list(experimentId: string, params: ListSweepsParams = {}): Promise<Page<SweepSummary>> {
    return this.#t.get(
      `${path`/experiments/${experimentId}/sweeps`}${query({ limit: params.limit, cursor: params.cursor })}`,
    );
  }

  /** Every sweep of the experiment, page by page, newest first. */
  async *iterate(
    experimentId: string,
    params: Omit<ListSweepsParams, 'cursor'> = {},
  ): AsyncGenerator<SweepSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.list(experimentId, { ...params, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** The sweep: its declaration, runs (trial, point, objective), progress by run state, best and warnings. */
  get(experimentId: string, sweepId: string): Promise<SweepData> {
    return this.#t.get(path`/experiments/${experimentId}/sweeps/${sweepId}`);
  }

  /** Cancels the sweep workflow, which cancels the runs it started and starts no more. */
  cancel(experimentId: string, sweepId: string): Promise<SweepData> {
    return this.#t.post(path`/experiments/${experimentId}/sweeps/${sweepId}/cancel`);
  }
}

/** The request body: the spec's fields as the API names them (undefined ones are left out by JSON). */
function sweepBody(spec: SweepSpec): Record<string, unknown> {
  const tuning = {
    concurrency: spec.concurrency,
    objective: spec.objective,
    early_stopping: spec.earlyStopping,
    max_retries: spec.maxRetries,
    priority: spec.priority,
  };
  if (spec.strategy === 'repeat') {
    const { strategy, repeats, variations, seed } = spec;
    return { strategy, repeats, variations, seed, ...tuning };
  }
  const base = { base_yaml: spec.baseYaml, name_prefix: spec.namePrefix, ...tuning };
  if ('space' in spec) {
    const { strategy, space, trials, seed } = spec;
    return { strategy, space, trials, seed, ...base };
  }
  const strategy: SweepStrategy = spec.grid !== undefined ? 'grid' : 'list';
  return strategy === 'grid'
    ? { strategy, grid: spec.grid, ...base }
    : { strategy, list: spec.list, ...base };
}
