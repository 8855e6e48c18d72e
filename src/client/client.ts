import os from 'node:os';
import path from 'node:path';
import {
  resolveSettings,
  resolveSettingsFromFile,
  type ResolvedSettings,
  type Settings,
  type SettingsOptions,
} from './config.ts';
import type { ClientCore } from './core/client-core.ts';
import { OrganizationDefault } from './core/organization.ts';
import { Transport } from './core/transport.ts';
import { Experiment } from './handles/experiment.ts';
import type { Run as RunHandle } from './handles/run.ts';
import { Run } from './handles/run.ts';
import { Variation } from './handles/variation.ts';
import { ApiKeys } from './resources/api-keys.ts';
import { Assets } from './resources/assets.ts';
import { Experiments, type CreateExperimentParams } from './resources/experiments.ts';
import { Me } from './resources/me.ts';
import { Orchestrator } from './resources/orchestrator.ts';
import { Runs } from './resources/runs.ts';
import { Search } from './resources/search.ts';
import { Sweeps } from './resources/sweeps.ts';
import { Variations } from './resources/variations.ts';
import { createUploader, type UploadHandle, type Uploader, type UploadParams } from './uploads/uploader.ts';
import type { AssetData } from './resources/assets.ts';

// fromFile resolves settings its own way and hands them to the constructor under a key callers cannot write.
const PRESET = Symbol('preset settings');
type PresetOptions = ClientOptions & { [PRESET]?: ResolvedSettings };

export interface ClientOptions extends SettingsOptions {
  /** The crash-recovery store of uploads; defaults to ~/.assay/uploads.db. */
  uploadStorePath?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

/**
 * The Assay client: one namespace per endpoint group and handles (Experiment, Variation, Run) that wrap them.
 * Synchronous in this sense: every call is one request and resolves with its answer; nothing is
 * retried or cached beyond per-handle data.
 */
export class Client implements ClientCore {
  readonly settings: Settings;
  readonly sources: ResolvedSettings['sources'];
  readonly transport: Transport;
  readonly experiments: Experiments;
  readonly variations: Variations;
  readonly runs: Runs;
  readonly sweeps: Sweeps;
  readonly assets: Assets;
  readonly search: Search;
  readonly apiKeys: ApiKeys;
  readonly me: Me;
  /** For the orchestrator's own key only (the Temporal activities); see Orchestrator. */
  readonly orchestrator: Orchestrator;
  readonly #uploadStorePath: string;
  #uploader: Uploader | undefined;

  /** Explicit options first, then SERVICE_* variables, then ~/.assay files, then defaults. */
  constructor(options: ClientOptions = {}) {
    const { uploadStorePath, fetch, ...settings } = options;
    this.#uploadStorePath = uploadStorePath ?? path.join(os.homedir(), '.assay', 'uploads.db');
    const resolved = (options as PresetOptions)[PRESET] ?? resolveSettings(settings);
    this.settings = resolved.settings;
    this.sources = resolved.sources;
    this.transport = new Transport({
      serverUrl: this.settings.serverUrl,
      apiKey: this.settings.apiKey,
      timeout: this.settings.timeout,
      fetch,
    });
    const organization = new OrganizationDefault(
      this.transport,
      this.settings.organizationId,
      this.settings.organizationSlug,
    );
    this.experiments = new Experiments(this.transport, organization);
    this.variations = new Variations(this.transport);
    this.runs = new Runs(this.transport);
    this.sweeps = new Sweeps(this.transport);
    this.assets = new Assets(this.transport, organization);
    this.search = new Search(this.transport, organization);
    this.apiKeys = new ApiKeys(this.transport);
    this.me = new Me(this.transport);
    this.orchestrator = new Orchestrator(this.transport);
  }

  /** Same resolution as the constructor, named for symmetry with the other clients' from_env. */
  static fromEnv(options: ClientOptions = {}): Client {
    return new Client(options);
  }

  /** From the given YAML files only (a combined file may be passed as `config`), ignoring the environment. */
  static fromFile(
    config?: string,
    credentials?: string,
    options: Omit<ClientOptions, keyof SettingsOptions> = {},
  ): Client {
    return new Client({
      ...options,
      [PRESET]: resolveSettingsFromFile(config, credentials),
    } as PresetOptions);
  }

  /** A handle on an existing experiment. */
  experiment(id: string): Experiment {
    return new Experiment(this, id);
  }

  /** Creates a draft experiment and returns its handle. */
  async createExperiment(params: CreateExperimentParams): Promise<Experiment> {
    return new Experiment(this, (await this.experiments.create(params)).id);
  }

  variation(experimentId: string, n: number): Variation {
    return new Variation(this, experimentId, n);
  }

  /** The handle a runner works with; a managed worker gets the three values from its environment. */
  run(experimentId: string, n: number, r: number): Run {
    return new Run(this, experimentId, n, r);
  }

  /** Uploads files as one asset and resolves when it is ready (crash-safe: see uploadAsync). */
  async upload(params: UploadParams): Promise<AssetData> {
    return this.uploadAsync(params).done;
  }

  /**
   * Registers every file in the local recovery store, then uploads in the background with
   * `maxUploadWorkers` workers and finalizes; returns at once. A restarted process continues with resumeUploads().
   */
  uploadAsync(params: UploadParams): UploadHandle {
    return this.#uploads().uploadAsync(params);
  }

  /** Continues the uploads a previous process left incomplete (re-presigning expired URLs). */
  resumeUploads(): Promise<UploadHandle[]> {
    return this.#uploads().resume();
  }

  async waitForRunUploads(run: RunHandle): Promise<void> {
    await this.#uploader?.waitForRun({ experimentId: run.experimentId, n: run.n, r: run.r });
  }

  /** Closes the upload store; in-flight uploads stay in it and resume in a later process. */
  close(): void {
    this.#uploader?.close();
    this.#uploader = undefined;
  }

  #uploads(): Uploader {
    this.#uploader ??= createUploader({
      assets: this.assets,
      serverUrl: this.settings.serverUrl,
      storePath: this.#uploadStorePath,
      maxWorkers: this.settings.maxUploadWorkers,
      timeoutS: this.settings.timeout,
    });
    return this.#uploader;
  }
}
