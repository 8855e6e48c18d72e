import type { ClientCore } from '../core/client-core.ts';
import { path } from '../core/path.ts';
import type {
  MetricSeries,
  MetricSummary,
  RunControl,
  RunHeartbeat,
  RunnerFailureReason,
} from '@assay/contract';
import type {
  Checkpoint,
  MetricSeriesParams,
  RunConfig,
  RunControlOptions,
  RunData,
} from '../resources/runs.ts';
import { MetricBuffer, type MetricTime } from './metric-buffer.ts';

/**
 * Where a `logMetrics` call's points sit: their step (see `Run.logMetrics`) and, optionally, their own time.
 */
export interface LogMetricsOptions {
  step?: number;
  /** Defaults to the moment of the call. */
  timestamp?: MetricTime;
}

/**
 * One run, addressed by experiment id, n and r: the only place the lifecycle moves live.
 * The intended order: config() → start() → heartbeat() in a loop while outputs upload → succeed() or fail().
 */
export class Run {
  readonly experimentId: string;
  readonly n: number;
  readonly r: number;
  readonly #core: ClientCore;
  #data: RunData | undefined;
  #metrics: MetricBuffer | undefined;
  #nextStep = 0;

  constructor(core: ClientCore, experimentId: string, n: number, r: number, data?: RunData) {
    this.#core = core;
    this.experimentId = experimentId;
    this.n = n;
    this.r = r;
    this.#data = data;
  }

  get #path(): string {
    return path`/experiments/${this.experimentId}/variations/${this.n}/runs/${this.r}`;
  }

  /** The run record, cached on this handle until a move through it. */
  async data(): Promise<RunData> {
    this.#data ??= await this.#core.runs.get(this.experimentId, this.n, this.r);
    return this.#data;
  }

  refresh(): this {
    this.#data = undefined;
    return this;
  }

  async #move(move: string, body?: unknown): Promise<RunData> {
    this.#data = undefined;
    this.#data = await this.#core.transport.post<RunData>(`${this.#path}/${move}`, body);
    return this.#data;
  }

  /** The variation's config; reading it is what allows start(). */
  config(): Promise<RunConfig> {
    this.#data = undefined;
    return this.#core.runs.config(this.experimentId, this.n, this.r);
  }

  /** pending → running, with an environment snapshot (OS, versions, git commit, GPUs…). */
  start(environment: Record<string, unknown> = {}): Promise<RunData> {
    return this.#move('start', { environment });
  }

  /**
   * Tells the server the run is alive; answers whether a cancel was requested (then stop and
   * fail 'abandoned').
   */
  async heartbeat(): Promise<RunHeartbeat> {
    this.#data = undefined;
    return this.#core.transport.post(`${this.#path}/heartbeat`);
  }

  /**
   * Waits up to `waitS` seconds (default 25) for the run to be asked to stop or to end, and answers at once
   * when it already was: `{ state, cancel_requested, cancel_reason }`. A runner keeps one open while its
   * program runs, so a cancel reaches it without waiting for a heartbeat.
   */
  control(options: RunControlOptions = {}): Promise<RunControl> {
    return this.#core.runs.control(this.experimentId, this.n, this.r, options);
  }

  /**
   * running → succeeded, after this handle's metric points are stored and this process's pending uploads of
   * the run have finished; undelivered points raise MetricsError and failed uploads UploadError instead.
   */
  async succeed(): Promise<RunData> {
    await this.flushMetrics();
    await this.#core.waitForRunUploads(this);
    return this.#move('succeed');
  }

  /**
   * running → failed: 'abandoned' on a cancel, 'crash' on an unrecoverable error. This handle's metric points
   * are sent first; points that cannot be stored do not keep the run from failing (they are dropped).
   */
  async fail(reason: RunnerFailureReason, message?: string): Promise<RunData> {
    await this.flushMetrics().catch(() => undefined);
    return this.#move('fail', { reason, message });
  }

  /**
   * Records scalar metrics of a running run, e.g. `run.logMetrics({ loss: 0.31, acc: 0.9 }, { step: 10 })`.
   * Returns at once: points are buffered and sent in batches (see MetricsOptions), and stored by the time
   * flushMetrics(), succeed() or fail() resolves. Values may be NaN or ±Infinity. Without `step`, a call
   * takes the step after this handle's previous call (0 for its first), so a loop that passes no steps
   * numbers its calls 0, 1, 2…; a given step moves that counter to step + 1. A point logged again at the same
   * key and step replaces the earlier one. Throws RangeError or TypeError for a bad key, step or value
   * (nothing of the call is kept then), and MetricsError when points of earlier calls could not be stored.
   */
  logMetrics(values: Record<string, number>, options: LogMetricsOptions = {}): void {
    const step = options.step ?? this.#nextStep;
    const points = MetricBuffer.points(values, step, options.timestamp);
    this.#nextStep = step + 1;
    if (points.length === 0) return;
    this.#metrics ??= new MetricBuffer(
      (batch) => this.#core.runs.logMetrics(this.experimentId, this.n, this.r, batch),
      this.#core.metricsOptions,
    );
    this.#metrics.add(points);
  }

  /**
   * Resolves when every point logged through this handle is stored; throws MetricsError for points dropped.
   */
  async flushMetrics(): Promise<void> {
    await this.#metrics?.flush();
  }

  /** Every metric key of this run with its count, last point and extremes. */
  metrics(): Promise<MetricSummary[]> {
    return this.#core.runs.metrics(this.experimentId, this.n, this.r);
  }

  /** One key's series of this run: downsampled with `maxPoints`, else one page (see Runs.metricSeries). */
  metricSeries(key: string, params: MetricSeriesParams = {}): Promise<MetricSeries> {
    return this.#core.runs.metricSeries(this.experimentId, this.n, this.r, key, params);
  }

  /** Asks the run to stop (a pending run fails at once). */
  async cancel(): Promise<RunData> {
    this.#data = undefined;
    this.#data = await this.#core.runs.cancel(this.experimentId, this.n, this.r);
    return this.#data;
  }

  /** The newest ready checkpoint of this run's variation, to resume from. */
  checkpoint(): Promise<Checkpoint> {
    return this.#core.runs.checkpoint(this.experimentId, this.n, this.r);
  }
}
