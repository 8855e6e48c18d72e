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

export interface Checkpoint {
  asset: AssetData;
  download: DownloadData;
}

/**
 * The runs namespace: create and read runs. The lifecycle moves (start, heartbeat, succeed, fail) live on
 * the Run handle only (SPEC.md §9); `client.run(experimentId, n, r)` gives one.
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
    return (await this.#t.get<{ items: RunData[] }>(path`/experiments/${experimentId}/variations/${n}/runs`)).items;
  }

  /** The run's variation config; the server records that the runner read it (start requires that). */
  config(experimentId: string, n: number, r: number): Promise<RunConfig> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/config`);
  }

  /** Cancels: a pending run fails `abandoned` at once; a running one is asked to stop via its heartbeat. */
  cancel(experimentId: string, n: number, r: number): Promise<RunData> {
    return this.#t.post(path`/experiments/${experimentId}/variations/${n}/runs/${r}/cancel`);
  }

  /** The newest ready checkpoint of the run's variation with download URLs; NotFoundError when none. */
  checkpoint(experimentId: string, n: number, r: number): Promise<Checkpoint> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}/runs/${r}/checkpoint`);
  }
}
