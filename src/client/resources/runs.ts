import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';
import type { AssetData, DownloadData } from './assets.ts';

export type RunState = 'pending' | 'running' | 'succeeded' | 'failed';

export interface RunData {
  id: string;
  experiment_id: string;
  n: number;
  r: number;
  state: RunState;
  failure_reason: 'abandoned' | 'crash' | 'heartbeat_timeout' | 'provision_failed' | null;
  failure_message: string | null;
  environment: Record<string, unknown> | null;
  config_read_at: string | null;
  started_at: string | null;
  last_heartbeat_at: string | null;
  ended_at: string | null;
  managed: boolean;
  instance: Record<string, unknown> | null;
  workflow_id: string | null;
  /** Where the run's workflow is seen in the Temporal UI; null for self-managed runs or when no UI is known. */
  workflow_url: string | null;
  /** The run this one was created to recover (a recovery run of a managed run that failed), else null. */
  recovers_run_id: string | null;
  cancel_requested: boolean;
  created_at: string;
}

export interface RunConfig {
  experiment_id: string;
  n: number;
  r: number;
  config_json: Record<string, unknown>;
  accelerate_config_json: Record<string, unknown>;
  launch_config: Record<string, unknown>;
  config_read_at: string;
}

/** What provisioning answers: the managed-run workflow (the same one on every repeat) and the run. */
export interface ProvisionData {
  workflow_id: string;
  /** The workflow in the Temporal UI, when the server knows the UI's address. */
  workflow_url: string | null;
  run: RunData;
}

export interface Checkpoint {
  asset: AssetData;
  download: DownloadData;
}

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
  create(experimentId: string, n: number): Promise<RunData> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs`);
  }

  get(experimentId: string, n: number, r: number): Promise<RunData> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}`);
  }

  async list(experimentId: string, n: number): Promise<RunData[]> {
    return (await this.#t.get<{ items: RunData[] }>(path`/experiments/${experimentId}/variations/${n}/runs`))
      .items;
  }

  /** The run's variation config; the server records that the runner read it (start requires that). */
  config(experimentId: string, n: number, r: number): Promise<RunConfig> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/config`);
  }

  /** Cancels: a pending run fails `abandoned` at once; a running one is asked to stop via its heartbeat. */
  cancel(experimentId: string, n: number, r: number): Promise<RunData> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/cancel`);
  }

  /**
   * Makes the run a managed run: the server starts its workflow, which mints a worker key and provisions an
   * instance that runs it. Repeating it is a no-op answering the same workflow; ServerError 503
   * (`orchestrator_unavailable`) when the server runs without an orchestrator.
   */
  provision(experimentId: string, n: number, r: number): Promise<ProvisionData> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/provision`);
  }

  /** The newest ready checkpoint of the run's variation with download URLs; NotFoundError when none. */
  checkpoint(experimentId: string, n: number, r: number): Promise<Checkpoint> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/checkpoint`);
  }
}
