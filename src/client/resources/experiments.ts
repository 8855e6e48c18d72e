import type {
  Experiment,
  ExperimentDetail,
  ExperimentMetricKeys,
  ExperimentMetricSeries,
  ExperimentMetrics,
  ExperimentSummary,
  ExperimentState,
  LineageDirection,
  LineageResponse,
  Page,
} from '@assay/contract';
import type { OrganizationDefault, OrganizationChoice } from '../core/organization.ts';
import { path, query } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';
import { seriesQuery } from './runs.ts';

export type {
  ExperimentDetail,
  ExperimentMetricKeys,
  ExperimentMetricSeries,
  ExperimentMetrics,
  RunMetricFigures,
  ExperimentState,
  ExperimentSummary,
  LineageDirection,
  LineageResponse,
  Page,
  RunCounts,
} from '@assay/contract';

/** An experiment as the service answers it (the contract's Experiment). */
export type ExperimentData = Experiment;

export interface CreateExperimentParams {
  name: string;
  description?: string;
  hypothesis?: string;
  parentIds?: string[];
  /** An organization id, or PERSONAL; defaults to the client's organization. */
  organizationId?: OrganizationChoice;
  tags?: string[];
}

export interface ListExperimentsParams {
  state?: ExperimentState;
  q?: string;
  /** Only experiments with every one of these tags. */
  tags?: string[];
  limit?: number;
  cursor?: string;
  organizationId?: OrganizationChoice;
}

/** A page of an experiment's metric keys; see `Experiments.metricKeys`. */
export interface ExperimentMetricKeysParams {
  /** Keys per page (default 1,000, at most MAX_METRIC_PAGE). */
  limit?: number;
  cursor?: string;
  /** Archived runs' keys too (default: left out, as from every comparison). */
  archived?: boolean;
}

/** Which part of each run's curve to read, and which page of runs; see `Experiments.metricSeries`. */
export interface ExperimentSeriesParams {
  /** Each run's series downsampled on the server to about this many points (default 1,000). */
  maxPoints?: number;
  minStep?: number;
  maxStep?: number;
  /** Runs per page (default and at most MAX_SERIES_RUNS_PER_PAGE). */
  limit?: number;
  cursor?: string;
  /** Archived runs too (default: left out). */
  archived?: boolean;
}

/** The experiments namespace: create, read, edit and move experiments through their states. */
export class Experiments {
  readonly #t: Transport;
  readonly #org: OrganizationDefault;

  constructor(transport: Transport, organization: OrganizationDefault) {
    this.#t = transport;
    this.#org = organization;
  }

  /** Creates a draft experiment. */
  async create(params: CreateExperimentParams): Promise<ExperimentData> {
    const organization_id = await this.#org.forCall(params.organizationId);
    return this.#t.post('/experiments', {
      name: params.name,
      description: params.description,
      hypothesis: params.hypothesis,
      parent_ids: params.parentIds,
      organization_id,
      tags: params.tags,
    });
  }

  /** One page of experiments of a scope, newest first; pass `next_cursor` back as `cursor` for the next. */
  async list(params: ListExperimentsParams = {}): Promise<Page<ExperimentSummary>> {
    const organization_id = await this.#org.forCall(params.organizationId);
    return this.#t.get(
      `/experiments${query({ state: params.state, q: params.q, tag: params.tags?.join(','), limit: params.limit, cursor: params.cursor, organization_id })}`,
    );
  }

  /** Every experiment of a scope, page by page. */
  async *iterate(params: Omit<ListExperimentsParams, 'cursor'> = {}): AsyncGenerator<ExperimentSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...params, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** The experiment detail: variations, run counts by state, parents and children. */
  get(id: string): Promise<ExperimentDetail> {
    return this.#t.get(path`/experiments/${id}`);
  }

  /** Edits a draft; `tags` alone may change in any state. */
  update(
    id: string,
    changes: { name?: string; description?: string; hypothesis?: string; tags?: string[] },
  ): Promise<ExperimentData> {
    return this.#t.request('PATCH', path`/experiments/${id}`, { body: changes });
  }

  /** Deletes a draft with its variations and runs; ConflictError for any other state. */
  async delete(id: string): Promise<void> {
    await this.#t.request('DELETE', path`/experiments/${id}`);
  }

  /** draft → committed: variations freeze, runs become possible. */
  commit(id: string): Promise<ExperimentData> {
    return this.#t.post(path`/experiments/${id}/commit`);
  }

  /** committed → concluded: no new runs. */
  conclude(id: string): Promise<ExperimentData> {
    return this.#t.post(path`/experiments/${id}/conclude`);
  }

  /** committed | concluded → retracted, with the reason. */
  retract(id: string, reason: string): Promise<ExperimentData> {
    return this.#t.post(path`/experiments/${id}/retract`, { reason });
  }

  /** Walks ancestors and/or descendants to a depth. */
  lineage(
    id: string,
    params: { direction?: LineageDirection; depth?: number } = {},
  ): Promise<LineageResponse> {
    return this.#t.get(path`/experiments/${id}/lineage` + query(params));
  }

  /**
   * The given metric keys' figures (last, min, max, count) in every run of the experiment that logged any of
   * them, to compare runs; at most MAX_METRIC_KEYS_PER_QUERY keys.
   */
  metrics(id: string, keys: readonly string[], params: { archived?: boolean } = {}): Promise<ExperimentMetrics> {
    return this.#t.get(
      path`/experiments/${id}/metrics` + query({ keys: keys.join(','), archived: params.archived }),
    );
  }

  /**
   * One page of the metric keys any run of the experiment logged, in byte order, each with how many runs
   * logged it; pass `next_cursor` back as `cursor` for the next.
   */
  metricKeys(id: string, params: ExperimentMetricKeysParams = {}): Promise<ExperimentMetricKeys> {
    return this.#t.get(
      path`/experiments/${id}/metric-keys` +
        query({ limit: params.limit, cursor: params.cursor, archived: params.archived }),
    );
  }

  /**
   * One key's curve in each run that logged it, a page of runs in (n, r) order, each downsampled on the
   * server (to compare runs in one read instead of one per run); NotFoundError when no run logged the key.
   */
  metricSeries(
    id: string,
    key: string,
    params: ExperimentSeriesParams = {},
  ): Promise<ExperimentMetricSeries> {
    return this.#t.get(
      path`/experiments/${id}/metrics/${key}` + seriesQuery(params, { archived: params.archived }),
    );
  }
}
