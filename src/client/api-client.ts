// The client as any JavaScript runtime runs it, a browser included: global fetch, no files, no local store.
import {
  checkKey,
  checkString,
  checkTimeout,
  checkUrl,
  DEFAULT_SERVER_URL,
  DEFAULT_TIMEOUT_SECONDS,
} from './config-values.ts';
import type { ClientCore } from './core/client-core.ts';
import { ConfigError } from './core/errors.ts';
import { OrganizationDefault } from './core/organization.ts';
import { Transport, type FetchLike } from './core/transport.ts';
import { Experiment } from './handles/experiment.ts';
import { MetricBuffer, type MetricsOptions } from './handles/metric-buffer.ts';
import { Run } from './handles/run.ts';
import { Variation } from './handles/variation.ts';
import { ApiKeys } from './resources/api-keys.ts';
import { Assets, type RunRef } from './resources/assets.ts';
import { Experiments, type CreateExperimentParams } from './resources/experiments.ts';
import { Me } from './resources/me.ts';
import { Organizations } from './resources/organizations.ts';
import { Runs } from './resources/runs.ts';
import { Search } from './resources/search.ts';
import { Sweeps } from './resources/sweeps.ts';
import { Variations } from './resources/variations.ts';

/** Explicit settings only: nothing is read from an environment or a file. */
export interface ApiClientOptions {
  /** Defaults to http://127.0.0.1:8080; a web page passes its service's origin. */
  serverUrl?: string;
  apiKey: string;
  /** Per-request timeout in seconds; defaults to 30. */
  timeout?: number;
  /** The default organization of calls that take one: an id, or a slug resolved on first use. */
  organizationId?: string;
  organizationSlug?: string;
  /** A fetch to use instead of the global one (anything with the part of its shape FetchLike names). */
  fetch?: FetchLike;
  /** How run handles batch and retry `logMetrics` points. */
  metrics?: MetricsOptions;
}

/**
 * The Assay API client: one namespace per endpoint group and handles (Experiment, Variation, Run) that wrap
 * them. Every call is one request and resolves with its answer; nothing is retried or cached beyond
 * per-handle data. File uploads and configuration files are the Node client's (`Client`).
 */
export class ApiClient implements ClientCore {
  readonly transport: Transport;
  readonly experiments: Experiments;
  readonly variations: Variations;
  readonly runs: Runs;
  readonly sweeps: Sweeps;
  readonly assets: Assets;
  readonly search: Search;
  readonly apiKeys: ApiKeys;
  readonly me: Me;
  readonly organizations: Organizations;
  readonly metricsOptions: MetricsOptions | undefined;

  /** Throws ConfigError when a setting is invalid, before any request. */
  constructor(options: ApiClientOptions) {
    if (options.organizationId !== undefined && options.organizationSlug !== undefined) {
      throw new ConfigError(
        'set an organization id or slug, not both: organizationId and organizationSlug are both set',
      );
    }
    const optional = <T>(value: T | undefined, check: (v: unknown, where: string) => T, name: string) =>
      value === undefined ? undefined : check(value, name);
    this.transport = new Transport({
      serverUrl: checkUrl(options.serverUrl ?? DEFAULT_SERVER_URL, 'serverUrl'),
      apiKey: checkKey(options.apiKey, 'apiKey'),
      timeout: optional(options.timeout, checkTimeout, 'timeout') ?? DEFAULT_TIMEOUT_SECONDS,
      fetch: options.fetch,
    });
    const organization = new OrganizationDefault(
      this.transport,
      optional(options.organizationId, checkString, 'organizationId'),
      optional(options.organizationSlug, checkString, 'organizationSlug'),
    );
    this.experiments = new Experiments(this.transport, organization);
    this.variations = new Variations(this.transport);
    this.runs = new Runs(this.transport);
    this.sweeps = new Sweeps(this.transport);
    this.assets = new Assets(this.transport, organization);
    this.search = new Search(this.transport, organization);
    this.apiKeys = new ApiKeys(this.transport);
    this.me = new Me(this.transport);
    this.organizations = new Organizations(this.transport);
    // A bad batch size or interval fails here, not at a run's first logMetrics.
    if (options.metrics) new MetricBuffer(() => Promise.resolve(), options.metrics);
    this.metricsOptions = options.metrics;
  }

  /** A handle on an existing experiment. */
  experiment(id: string): Experiment {
    return new Experiment(this, id);
  }

  /** Creates a draft experiment and returns its handle. */
  async createExperiment(params: CreateExperimentParams): Promise<Experiment> {
    return new Experiment(this, (await this.experiments.create(params)).id);
  }

  /** A handle on variation n of an experiment. */
  variation(experimentId: string, n: number): Variation {
    return new Variation(this, experimentId, n);
  }

  /** The handle a runner works with; a managed worker gets the three values from its environment. */
  run(experimentId: string, n: number, r: number): Run {
    return new Run(this, experimentId, n, r);
  }

  /** Resolves at once: this client uploads nothing itself, so no upload of a run can be pending in it. */
  waitForRunUploads(_run: RunRef): Promise<void> {
    return Promise.resolve();
  }
}
