// The trial sweep's service calls, each idempotent: keyed by (sweep, trial) or by the failed run, so a
// retried or replayed activity answers what the first call made.
import type { TrialRecord } from '../workflows/sweep-types.ts';
import type { ManagedRunRef } from '../workflows/saga-types.ts';
import type { RunData } from '../src/client/index.ts';
import type { OrchestratorApi } from './orchestrator-api.ts';

const refOf = (run: RunData): ManagedRunRef => ({
  runId: run.id,
  experimentId: run.experiment_id,
  n: run.n,
  r: run.r,
  workflowId: run.workflow_id!,
});

export function createSweepActivities(
  api: OrchestratorApi,
  orchestrated: <T>(call: () => Promise<T>) => Promise<T>,
) {
  return {
    /** Every trial of the sweep so far, in trial order, with its state and objective value. */
    async trialHistory(sweepId: string): Promise<TrialRecord[]> {
      return (await orchestrated(() => api.sweepTrials(sweepId))).items as TrialRecord[];
    },

    /** The trial's variation (marked with the sweep and trial) and its first managed run. */
    async createTrial(input: {
      sweepId: string;
      trial: number;
      params: Record<string, unknown>;
    }): Promise<ManagedRunRef> {
      return refOf(await orchestrated(() => api.createTrial(input.sweepId, input.trial, input.params)));
    },

    /** A new run of the failed run's variation, marked as retrying it. */
    async createRetryRun(runId: string): Promise<ManagedRunRef> {
      return refOf(await orchestrated(() => api.createRetryRun(runId)));
    },

    /** Ends the sweep's runs that never started, `abandoned`. */
    async abandonPendingSweepRuns(sweepId: string): Promise<number> {
      return (await orchestrated(() => api.abandonPendingSweepRuns(sweepId))).abandoned;
    },
  };
}
