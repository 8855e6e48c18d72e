// The Node client: the API client plus settings from the environment and ~/.assay, and crash-safe uploads.
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ApiClient } from './api-client.ts';
import {
  resolveSettings,
  resolveSettingsFromFile,
  type ResolvedSettings,
  type Settings,
  type SettingsOptions,
} from './config.ts';
import type { FetchLike } from './core/transport.ts';
import type { MetricsOptions } from './handles/metric-buffer.ts';
import type { AssetData, RunRef } from './resources/assets.ts';
import type { UploadHandle, Uploader, UploadParams } from './uploads/uploader.ts';

// The uploader (undici, node:sqlite) is about half of what `assay run` would load before its run starts, and
// most clients never upload: it is loaded on the first upload, or before it by prepareUploads. prepareUploads
// imports it by a literal path, which a bundler follows (the runner's bundle, scripts/build-runner.ts) and
// tsc rewrites to .js for the built package. Without it, the first upload loads it synchronously (require of
// an ES module), so uploadAsync still registers the files in the recovery store before it returns; that path
// is beside this file's own kind (the sources under type stripping, the built .js) and is absent from a
// bundle, whose callers prepare first (src/cli/run-supervisor.ts does).
type UploaderModule = typeof import('./uploads/uploader.ts');
const requireHere = createRequire(import.meta.url);
const uploaderModule = `./uploads/uploader${path.extname(import.meta.filename)}`;
let uploaderLoaded: UploaderModule | undefined;
const loadUploader = (): UploaderModule => (uploaderLoaded ??= requireHere(uploaderModule));
let preparing: Promise<unknown> | undefined;

// fromFile resolves settings its own way and hands them to the constructor under a key callers cannot write.
const PRESET = Symbol('preset settings');
type PresetOptions = ClientOptions & { [PRESET]?: ResolvedSettings };

export interface ClientOptions extends SettingsOptions {
  /** The crash-recovery store of uploads; defaults to ~/.assay/uploads.db. */
  uploadStorePath?: string;
  /** A fetch to use instead of the global one (anything with the part of its shape FetchLike names). */
  fetch?: FetchLike;
  /** How run handles batch and retry `logMetrics` points. */
  metrics?: MetricsOptions;
}

/**
 * The Assay client for Node: ApiClient's namespaces and handles, its settings resolved from explicit options,
 * SERVICE_* variables and ~/.assay files, and file uploads that survive a crash of the process.
 */
export class Client extends ApiClient {
  readonly settings: Settings;
  readonly sources: ResolvedSettings['sources'];
  readonly #uploadStorePath: string;
  #uploader: Uploader | undefined;

  /** Explicit options first, then SERVICE_* variables, then ~/.assay files, then defaults. */
  constructor(options: ClientOptions = {}) {
    const { uploadStorePath, fetch, metrics, ...explicit } = options;
    const resolved = (options as PresetOptions)[PRESET] ?? resolveSettings(explicit);
    const { serverUrl, apiKey, timeout, organizationId, organizationSlug } = resolved.settings;
    super({ serverUrl, apiKey, timeout, organizationId, organizationSlug, fetch, metrics });
    this.settings = resolved.settings;
    this.sources = resolved.sources;
    this.#uploadStorePath = uploadStorePath ?? path.join(os.homedir(), '.assay', 'uploads.db');
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

  /** Uploads files as one asset and resolves when it is ready (crash-safe: see uploadAsync). */
  async upload(params: UploadParams): Promise<AssetData> {
    return this.uploadAsync(params).done;
  }

  /**
   * Registers every file in the local recovery store, then uploads in the background with
   * `maxUploadWorkers` workers and finalizes; returns at once. A restarted process continues
   * with resumeUploads().
   */
  uploadAsync(params: UploadParams): UploadHandle {
    return this.#uploads().uploadAsync(params);
  }

  /** Continues the uploads a previous process left incomplete (re-presigning expired URLs). */
  resumeUploads(): Promise<UploadHandle[]> {
    return this.#uploads().resume();
  }

  /**
   * Loads the upload code in the background, without blocking the event loop as the first upload's own
   * (synchronous) load would; later uploads find it loaded. Optional: uploads work without it.
   */
  async prepareUploads(): Promise<void> {
    preparing ??= import('./uploads/uploader.ts').then(
      (loaded) => (uploaderLoaded ??= loaded),
      () => undefined,
    );
    await preparing;
  }

  /** Resolves when this process's uploads for the run are done; raises UploadError naming any that failed. */
  override async waitForRunUploads(run: RunRef): Promise<void> {
    await this.#uploader?.waitForRun({ experimentId: run.experimentId, n: run.n, r: run.r });
  }

  /** Closes the upload store; in-flight uploads stay in it and resume in a later process. */
  close(): void {
    this.#uploader?.close();
    this.#uploader = undefined;
  }

  #uploads(): Uploader {
    this.#uploader ??= loadUploader().createUploader({
      assets: this.assets,
      serverUrl: this.settings.serverUrl,
      storePath: this.#uploadStorePath,
      maxWorkers: this.settings.maxUploadWorkers,
      timeoutS: this.settings.timeout,
    });
    return this.#uploader;
  }
}
