import type { Sweep } from '@assay/contract';
import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type { SweepRunCounts, SweepRun } from '@assay/contract';

/** A sweep as the service answers it: its runs' states and the progress counted from them. */
export type SweepData = Sweep;

/** What every sweep takes, whatever its strategy. */
interface SweepBase {
  /**
   * The base variation config, YAML as a variation takes it (top-level `launch:` and `accelerate:` included).
   */
  baseYaml: string;
  /** How many of the sweep's runs may be in flight at once; the server's default when left out. */
  concurrency?: number;
  /** Prefix of the generated variation names. */
  namePrefix?: string;
}

/**
 * What to sweep: a base variation config and the changes to it, by strategy. Each key of `grid` and `list` is
 * a dotted path into the base YAML (`optimizer.lr`); `grid` takes every combination of its values, `list` one
 * variation per entry. `strategy` may be left out: the field given names it.
 */
export type SweepSpec = SweepBase &
  (
    | { strategy?: 'grid'; grid: Record<string, unknown[]>; list?: undefined }
    | { strategy?: 'list'; list: Array<Record<string, unknown>>; grid?: undefined }
  );

/**
 * The sweeps namespace: one variation per point of a grid or list, each run as a managed run by a sweep
 * workflow with bounded concurrency. Needs a server with an orchestrator (ServerError 503 otherwise).
 */
export class Sweeps {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Creates the variations and their runs and starts the sweep workflow. */
  create(experimentId: string, spec: SweepSpec): Promise<SweepData> {
    const { baseYaml, concurrency, namePrefix } = spec;
    const varied =
      spec.grid !== undefined
        ? { strategy: 'grid' as const, grid: spec.grid }
        : { strategy: 'list' as const, list: spec.list };
    return this.#t.post(path`/experiments/${experimentId}/sweeps`, {
      ...varied,
      base_yaml: baseYaml,
      concurrency,
      name_prefix: namePrefix,
    });
  }

  /** The sweep with its runs' states and the workflow's progress. */
  get(experimentId: string, sweepId: string): Promise<SweepData> {
    return this.#t.get(path`/experiments/${experimentId}/sweeps/${sweepId}`);
  }

  /** Cancels the sweep workflow, which cancels the runs it started. */
  cancel(experimentId: string, sweepId: string): Promise<SweepData> {
    return this.#t.post(path`/experiments/${experimentId}/sweeps/${sweepId}/cancel`);
  }
}
