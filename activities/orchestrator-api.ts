// The service's /orchestrator/* routes, for the Temporal activities only: not part of the public client.
import type {
  AbandonedRuns,
  ComputeSlot,
  ExchangeToken,
  ManagedRun,
  OrchestratorDeployment,
  OrchestratorFailureReason,
  ReleasedSlot,
  RunAssetSummary,
  RunInstance,
  SweepTrialHistory,
} from '@assay/contract';

import { path, Transport } from '../src/client/transport.ts';
import type { RunData } from '../src/client/index.ts';

/**
 * The calls the managed-run and sweep workflows' activities make, every one keyed by run id. Only the
 * orchestrator's own key (minted by the service for its Temporal worker) may call them; any other key is
 * refused. Researchers and runners never need them, so the published client leaves them out.
 */
export class OrchestratorApi {
  readonly #t: Transport;

  /** On an existing transport (a client's), or on its own one to serviceUrl with the orchestrator key. */
  constructor(transport: Transport | { serverUrl: string; apiKey: string; timeout: number }) {
    this.#t = transport instanceof Transport ? transport : new Transport(transport);
  }

  /** The deployment's namespace and task queue: what a standalone worker must poll. */
  deployment(): Promise<OrchestratorDeployment> {
    return this.#t.get(path`/orchestrator/deployment`);
  }

  /** The run and the launch config its instance is provisioned from. */
  getRun(runId: string): Promise<ManagedRun> {
    return this.#t.get(path`/orchestrator/runs/${runId}`);
  }

  /** Mints a one-time exchange token bound to the run, for the instance's environment; revokes nothing. */
  mintExchangeToken(runId: string): Promise<ExchangeToken> {
    return this.#t.post(path`/orchestrator/runs/${runId}/exchange-token`);
  }

  /** Revokes every worker key of the run and answers how many it revoked (a saga compensation). */
  revokeWorkerKeys(runId: string): Promise<{ revoked: number }> {
    return this.#t.request('DELETE', path`/orchestrator/runs/${runId}/worker-keys`);
  }

  /** Records the run's instance and its provider state. */
  recordInstance(runId: string, instance: RunInstance): Promise<RunData> {
    const { provider, instance_id, state } = instance;
    return this.#t.request('PUT', path`/orchestrator/runs/${runId}/instance`, {
      body: { provider, instance_id, state },
    });
  }

  /**
   * Fails the run for a reason the orchestrator found (an instance that never came up, a silent runner, …).
   */
  failRun(runId: string, reason: OrchestratorFailureReason, message?: string): Promise<RunData> {
    return this.#t.post(path`/orchestrator/runs/${runId}/fail`, { reason, message });
  }

  /** Cancels the run as a user's cancel does: a pending run fails at once, a running one is asked to stop. */
  cancelRun(runId: string): Promise<RunData> {
    return this.#t.post(path`/orchestrator/runs/${runId}/cancel`);
  }

  /** The pending run that recovers this failed one; asking again answers the same run. */
  createRecoveryRun(runId: string): Promise<RunData> {
    return this.#t.post(path`/orchestrator/runs/${runId}/recovery`);
  }

  /** Asks for the run's slot in the `local` compute queue: its grant (GPU ids), or its place while it waits. */
  acquireSlot(runId: string): Promise<ComputeSlot> {
    return this.#t.post(path`/orchestrator/runs/${runId}/slot`);
  }

  /** The run leaves the compute queue, and the runs it made room for are granted; repeatable. */
  releaseSlot(runId: string): Promise<ReleasedSlot> {
    return this.#t.request('DELETE', path`/orchestrator/runs/${runId}/slot`);
  }

  /** The run's assets (its outputs and checkpoints), without components. */
  listRunAssets(runId: string): Promise<{ items: RunAssetSummary[] }> {
    return this.#t.get(path`/orchestrator/runs/${runId}/assets`);
  }

  /** The sweep's trials so far, as the sampler takes them. */
  sweepTrials(sweepId: string): Promise<SweepTrialHistory> {
    return this.#t.get(path`/orchestrator/sweeps/${sweepId}/trials`);
  }

  /** The trial's variation and first run, made once: asking again answers the same run. */
  createTrial(sweepId: string, trial: number, params: Record<string, unknown>): Promise<RunData> {
    return this.#t.post(path`/orchestrator/sweeps/${sweepId}/trials`, { trial, params });
  }

  /** Fails the sweep's pending runs `abandoned` (a cancelled sweep's runs that never started). */
  abandonPendingSweepRuns(sweepId: string): Promise<AbandonedRuns> {
    return this.#t.post(path`/orchestrator/sweeps/${sweepId}/abandon-pending`);
  }

  /** The run that retries this failed sweep run (same variation and seed); asking again answers the same. */
  createRetryRun(runId: string): Promise<RunData> {
    return this.#t.post(path`/orchestrator/runs/${runId}/retry`);
  }
}
