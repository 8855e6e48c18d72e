import type { Checkpoint, Provisioned, Run, RunConfig } from '@assay/contract';
import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type { Checkpoint, FailureReason, RunConfig, RunHeartbeat, RunState } from '@assay/contract';

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
