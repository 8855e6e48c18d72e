// What the HTTP service needs from the orchestrator (Temporal), as one small interface: routes depend on it,
// `src/orchestrator/temporal-orchestrator.ts` implements it, and a service without one answers 503.

import type { ManagedRunRef, WorkflowLabels } from '../../workflows/saga-types.ts';
import { searchTaskQueue, type SearchPlan } from '../../workflows/sweep-types.ts';

export { searchTaskQueue };

// One definition of the run a workflow carries: the workflows' own input shape.
export type { ManagedRunRef };

/**
 * What the Temporal UI shows of a workflow's experiment; the orchestrator knows whether it can index them.
 */
export type RunLabels = Omit<WorkflowLabels, 'indexed'>;

export interface SweepStart {
  sweepId: string;
  workflowId: string;
  experimentId: string;
  concurrency: number;
  /** Pre-made runs (grid, list, repeat), one trial each; none for a searching sweep. */
  runs: ManagedRunRef[];
  /** New runs a trial gets after failing crash, heartbeat_timeout or provision_failed. */
  maxRetries: number;
  /** A searching sweep's sampler inputs; the orchestrator names the sampler's queue. */
  search?: Omit<SearchPlan, 'queue'>;
  labels: Omit<RunLabels, 'sweepId'>;
}

/** Where this deployment's workflows go: its namespace and its own task queue. */
export interface Deployment {
  namespace: string;
  taskQueue: string;
}

/** A workflow's latest execution: open, or closed with Temporal's status (COMPLETED, FAILED, …). */
export interface WorkflowState {
  open: boolean;
  status: string;
}

export interface Orchestrator {
  /**
   * Names the deployment (its installation id, kept in its database): the task queue is the operator's
   * ASSAY_TASK_QUEUE or `assay-<installation id>`. The service calls it once at start; starts wait for it.
   */
  useDeployment(installationId: string): void;
  /** The namespace and task queue, once useDeployment was called. */
  deployment(): Promise<Deployment>;
  /**
   * Starts the run's managed-run workflow, or finds the one already started (USE_EXISTING). A closed
   * one stays the answer unless `restartClosed`: then a new execution with the same id drives the run.
   */
  startManagedRun(run: ManagedRunRef, labels: RunLabels, opts?: { restartClosed?: boolean }): Promise<void>;
  /** The workflow's latest execution; undefined when no workflow has that id. */
  workflowState(workflowId: string): Promise<WorkflowState | undefined>;
  /** Starts the sweep workflow, or finds the one already started. */
  startSweep(sweep: SweepStart): Promise<void>;
  /** Whether a search worker (the sampler of searching sweeps) polls this deployment's search queue. */
  samplerAvailable(): Promise<boolean>;
  /** Cancels the sweep workflow, which cancels its runs; an unknown or finished workflow is success. */
  cancelSweep(workflowId: string): Promise<void>;
  /**
   * Tells a run's workflow its run changed (started, ended, cancel requested) so it need not wait for a poll.
   */
  notifyRunChanged(workflowId: string): Promise<void>;
  /** Where an operator sees the workflow in the Temporal UI; undefined when no UI is known. */
  workflowUrl(workflowId: string): string | undefined;
  close(): Promise<void>;
}

export const managedRunWorkflowId = (experimentId: string, n: number, r: number) =>
  `run-${experimentId}-${n}-${r}`;
export const sweepWorkflowId = (sweepId: string) => `sweep-${sweepId}`;

/** The queue of a deployment the operator gave none: its own, so no other deployment's worker polls it. */
export const deploymentTaskQueue = (installationId: string) => `assay-${installationId}`;
