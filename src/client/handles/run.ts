import type { ClientCore } from '../core/client-core.ts';
import { path } from '../core/path.ts';
import type { RunHeartbeat, RunnerFailureReason } from '@assay/contract';
import type { Checkpoint, RunConfig, RunData } from '../resources/runs.ts';

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

  /** Tells the server the run is alive; answers whether a cancel was requested (then stop and fail 'abandoned'). */
  async heartbeat(): Promise<RunHeartbeat> {
    this.#data = undefined;
    return this.#core.transport.post(`${this.#path}/heartbeat`);
  }

  /** running → succeeded, after this process's pending uploads of the run have finished; failed uploads raise UploadError instead. */
  async succeed(): Promise<RunData> {
    await this.#core.waitForRunUploads(this);
    return this.#move('succeed');
  }

  /** running → failed: 'abandoned' on a cancel, 'crash' on an unrecoverable error. */
  fail(reason: RunnerFailureReason, message?: string): Promise<RunData> {
    return this.#move('fail', { reason, message });
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
