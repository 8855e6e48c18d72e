// What the HTTP service needs from the orchestrator (Temporal), as one small interface: routes depend on it,
// `src/orchestrator/temporal-orchestrator.ts` implements it, and a service without one answers 503.

import type { SweepProgress } from '@assay/contract';
import type { ManagedRunRef, WorkflowLabels } from '../../workflows/saga-types.ts';

// One definition of the run a workflow carries: the workflows' own input shape.
export type { ManagedRunRef, SweepProgress };

/** What the Temporal UI shows of a workflow's experiment; the orchestrator knows whether it can index them. */
export type RunLabels = Omit<WorkflowLabels, 'indexed'>;

export interface SweepStart {
  sweepId: string;
  workflowId: string;
  experimentId: string;
  concurrency: number;
  runs: ManagedRunRef[];
  labels: Omit<RunLabels, 'sweepId'>;
}

export interface Orchestrator {
  /** Starts the run's managed-run workflow, or finds the one already started (USE_EXISTING). */
  startManagedRun(run: ManagedRunRef, labels: RunLabels): Promise<void>;
  /** Starts the sweep workflow, or finds the one already started. */
  startSweep(sweep: SweepStart): Promise<void>;
  /** The sweep workflow's own progress (a Temporal query); undefined when no such workflow exists. */
  sweepProgress(workflowId: string): Promise<SweepProgress | undefined>;
  /** Cancels the sweep workflow, which cancels its runs; an unknown or finished workflow is success. */
  cancelSweep(workflowId: string): Promise<void>;
  /** Tells a run's workflow its run changed (started, ended, cancel requested) so it need not wait for a poll. */
  notifyRunChanged(workflowId: string): Promise<void>;
  /** Where an operator sees the workflow in the Temporal UI; undefined when no UI is known. */
  workflowUrl(workflowId: string): string | undefined;
  close(): Promise<void>;
}

export const managedRunWorkflowId = (experimentId: string, n: number, r: number) =>
  `run-${experimentId}-${n}-${r}`;
export const sweepWorkflowId = (sweepId: string) => `sweep-${sweepId}`;
