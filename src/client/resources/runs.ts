import type {
  AppendLogResult,
  Checkpoint,
  LogLineInput,
  LogPage,
  LogStream,
  LogMetricsResult,
  MetricPoint,
  MetricPointInput,
  MetricSeries,
  MetricSummary,
  Page,
  Provisioned,
  Run,
  RunConfig,
  RunControl,
  RunMetricList,
  RunState,
} from '@assay/contract';
import { path, query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type {
  AppendLogResult,
  Checkpoint,
  LogLine,
  LogLineInput,
  LogPage,
  LogStream,
  FailureReason,
  LogMetricsResult,
  MetricPoint,
  MetricPointInput,
  MetricSeries,
  MetricSummary,
  MetricValue,
  RunConfig,
  RunControl,
  RunHeartbeat,
  RunMetricList,
  RunState,
} from '@assay/contract';

/** Which part of a key's series to read; see `Runs.metricSeries`. */
export interface MetricSeriesParams {
  /** Downsample on the server to about this many points, over the whole step range, in one answer. */
  maxPoints?: number;
  minStep?: number;
  maxStep?: number;
  /** Points per page when not downsampling (default 1,000). */
  limit?: number;
  cursor?: string;
}

/** The query of a series read, a run's (`Runs.metricSeries`) or an experiment's (`Experiments.…`). */
export function seriesQuery(
  params: MetricSeriesParams,
  extra: Record<string, string | number | boolean | undefined> = {},
): string {
  return query({
    max_points: params.maxPoints,
    min_step: params.minStep,
    max_step: params.maxStep,
    limit: params.limit,
    cursor: params.cursor,
    ...extra,
  });
}

/** A page of a run's metric keys; see `Runs.metricKeys`. */
export interface RunMetricKeysParams {
  /** Keys per page (default 1,000, the default number of keys a run may log; at most MAX_METRIC_PAGE). */
  limit?: number;
  cursor?: string;
  /** Only the keys holding this text, letter case ignored. */
  contains?: string;
}

/** How long `Runs.control` may wait, and a signal to abandon it. */
export interface RunControlOptions {
  waitS?: number;
  signal?: AbortSignal;
}

/** How a new run is labelled, and the run whose checkpoints it resumes from (default: none, from scratch). */
export interface CreateRunParams {
  name?: string;
  tags?: string[];
  notes?: string;
  /** A run of the same experiment: its run number, and its variation when not the new run's. */
  resumeFrom?: { n?: number; r: number };
}

/** What `Runs.update` changes: labels, or archived (hidden from lists and compare, kept). */
export interface UpdateRunParams {
  name?: string | null;
  tags?: string[];
  notes?: string;
  archived?: boolean;
}

/** Which runs a list answers. */
export interface ListRunsParams {
  state?: RunState;
  /** Only runs with every one of these tags. */
  tags?: string[];
  /** Archived runs too (default: left out). */
  archived?: boolean;
}

/** A page of an experiment's runs (every variation), newest first; see `Runs.listForExperiment`. */
export interface ListExperimentRunsParams extends ListRunsParams {
  /** Runs per page (default 50, at most 200). */
  limit?: number;
  cursor?: string;
}

/** Which part of a run's log to read; see `Runs.logs`. */
export interface RunLogParams {
  /** Lines after this seq (default 0: from the start). */
  after?: number;
  limit?: number;
  stream?: LogStream;
  /** An empty answer waits up to this long (0–60 s) for new lines. */
  waitS?: number;
  signal?: AbortSignal;
}

/** A run as the service answers it (the contract's Run). */
export type RunData = Run;
/** What provisioning answers: the managed-run workflow (the same one on every repeat) and the run. */
export type ProvisionData = Provisioned;

/**
 * The runs namespace: create and read runs. The lifecycle moves (start, heartbeat, succeed, fail) live on
 * the Run handle only; `client.run(experimentId, n, r)` gives one.
 */
export class Runs {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** A new pending run of a variation of a committed experiment. */
  create(experimentId: string, n: number, params: CreateRunParams = {}): Promise<RunData> {
    const body = {
      name: params.name,
      tags: params.tags,
      notes: params.notes,
      resume_from: params.resumeFrom,
    };
    const given = Object.values(body).some((v) => v !== undefined);
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs`, given ? body : undefined);
  }

  /** Relabels a run or archives it; a worker key may not. */
  update(experimentId: string, n: number, r: number, changes: UpdateRunParams): Promise<RunData> {
    return this.#t.request('PATCH', path`/experiments/${experimentId}/variations/${n}/runs/${r}`, {
      body: changes,
    });
  }

  get(experimentId: string, n: number, r: number): Promise<RunData> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}`);
  }

  async list(experimentId: string, n: number, params: ListRunsParams = {}): Promise<RunData[]> {
    const filter = query({ state: params.state, tag: params.tags?.join(','), archived: params.archived });
    return (
      await this.#t.get<{ items: RunData[] }>(
        path`/experiments/${experimentId}/variations/${n}/runs` + filter,
      )
    ).items;
  }

  /** One page of the runs of every variation of the experiment, newest first; `next_cursor` for the next. */
  listForExperiment(experimentId: string, params: ListExperimentRunsParams = {}): Promise<Page<RunData>> {
    return this.#t.get(
      path`/experiments/${experimentId}/runs` +
        query({
          state: params.state,
          tag: params.tags?.join(','),
          archived: params.archived,
          limit: params.limit,
          cursor: params.cursor,
        }),
    );
  }

  /**
   * A page of the run's console log: the lines after `after`; with `waitS`, an empty answer waits for new
   * lines (follow by passing `next_after` back until `complete`).
   */
  logs(experimentId: string, n: number, r: number, params: RunLogParams = {}): Promise<LogPage> {
    const waitS = params.waitS ?? 0;
    return this.#t.request(
      'GET',
      path`/experiments/${experimentId}/variations/${n}/runs/${r}/logs` +
        query({ after: params.after, limit: params.limit, stream: params.stream, wait_s: params.waitS }),
      { timeout: waitS + this.#t.timeoutS, ...(params.signal ? { signal: params.signal } : {}) },
    );
  }

  /**
   * Stores lines `firstSeq`, `firstSeq + 1`, … of the run's log (at most MAX_LOG_LINES_PER_CHUNK); resending
   * a chunk stores nothing twice. `assay run` sends its program's output this way.
   */
  appendLogs(
    experimentId: string,
    n: number,
    r: number,
    firstSeq: number,
    lines: LogLineInput[],
  ): Promise<AppendLogResult> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/logs`, {
      first_seq: firstSeq,
      lines,
    });
  }

  /** The run's variation config; the server records that the runner read it (start requires that). */
  config(experimentId: string, n: number, r: number): Promise<RunConfig> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/config`);
  }

  /**
   * The runner's long-poll: answers at once when the run was asked to stop or is no longer running, else when
   * either happens, else after `waitS` seconds (0–60, default 25) with the same shape. The request's timeout
   * is the wait plus the client's own; `signal` abandons it.
   */
  control(experimentId: string, n: number, r: number, options: RunControlOptions = {}): Promise<RunControl> {
    const waitS = options.waitS ?? 25;
    return this.#t.request(
      'GET',
      `${path`/experiments/${experimentId}/variations/${n}/runs/${r}/control`}${query({ wait_s: waitS })}`,
      { timeout: waitS + this.#t.timeoutS, ...(options.signal ? { signal: options.signal } : {}) },
    );
  }

  /** Cancels: a pending run fails `abandoned` at once; a running one is asked to stop (see `control`). */
  cancel(experimentId: string, n: number, r: number): Promise<RunData> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/cancel`);
  }

  /**
   * Makes the run a managed run: the server starts its workflow, which mints a worker key and provisions an
   * instance that runs it. Repeating it is a no-op answering the same workflow; ServerError 503
   * (`orchestrator_unavailable`) when the server runs without an orchestrator. `priority` (-100 to 100,
   * default 0) places it in the compute queue: higher first, equal priorities taking turns by user.
   */
  provision(
    experimentId: string,
    n: number,
    r: number,
    options: { priority?: number } = {},
  ): Promise<ProvisionData> {
    const body = options.priority === undefined ? undefined : { priority: options.priority };
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/provision`, body);
  }

  /** The newest ready checkpoint of the run's variation with download URLs; NotFoundError when none. */
  checkpoint(experimentId: string, n: number, r: number): Promise<Checkpoint> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/checkpoint`);
  }

  /**
   * Stores one batch of points as they are (at most MAX_METRIC_POINTS_PER_REQUEST; values in their wire form,
   * see encodeMetricValue). Repeating a batch overwrites the same (key, step) points, so a retry is safe.
   * `run.logMetrics` on a handle buffers, batches and retries for you.
   */
  logMetrics(
    experimentId: string,
    n: number,
    r: number,
    points: MetricPointInput[],
  ): Promise<LogMetricsResult> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/metrics`, {
      metrics: points,
    });
  }

  /**
   * Every metric key of the run with its count, last point and extremes, by key (every page of metricKeys).
   */
  async metrics(experimentId: string, n: number, r: number): Promise<MetricSummary[]> {
    const items: MetricSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.metricKeys(experimentId, n, r, { cursor });
      items.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return items;
  }

  /**
   * One page of the run's metric keys in byte order, each with its count, last point and extremes; pass
   * `next_cursor` back as `cursor` for the next. `contains` keeps the keys holding that text.
   */
  metricKeys(
    experimentId: string,
    n: number,
    r: number,
    params: RunMetricKeysParams = {},
  ): Promise<RunMetricList> {
    return this.#t.get(
      path`/experiments/${experimentId}/variations/${n}/runs/${r}/metrics` +
        query({ limit: params.limit, cursor: params.cursor, contains: params.contains }),
    );
  }

  /**
   * One key's series in step order: with `maxPoints`, the whole step range downsampled to about that many
   * points in one answer (for a chart); without, one page of every point (`next_cursor` for the next).
   */
  metricSeries(
    experimentId: string,
    n: number,
    r: number,
    key: string,
    params: MetricSeriesParams = {},
  ): Promise<MetricSeries> {
    return this.#t.get(
      path`/experiments/${experimentId}/variations/${n}/runs/${r}/metrics/${key}` + seriesQuery(params),
    );
  }

  /** Every point of one key (in a step range), page by page, in step order. */
  async *iterateMetricPoints(
    experimentId: string,
    n: number,
    r: number,
    key: string,
    params: Omit<MetricSeriesParams, 'maxPoints' | 'cursor'> = {},
  ): AsyncGenerator<MetricPoint> {
    let cursor: string | undefined;
    do {
      const page = await this.metricSeries(experimentId, n, r, key, { ...params, cursor });
      yield* page.points;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
}
