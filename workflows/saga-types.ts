// The shapes that cross the workflow boundary: inputs, results and activity answers. Types only, so the
// service, the worker and the workflow bundle share them without sharing code. Run states and failure reasons
// are the wire contract's.
import type { FailureReason, RunState, SweepProgress } from '@assay/contract';
import type { SearchPlan } from './sweep-types.ts';

export type { SweepProgress };

/** Timing of a managed run's saga, fixed when its workflow starts so that replays see the same values. */
export interface SagaSettings {
  startTimeoutMs: number;
  silenceTimeoutMs: number;
  cancelGraceMs: number;
  maxRecoveries: number;
  pollMs: number;
  watchSliceMs: number;
  slicesPerExecution: number;
  outputsTimeoutMs: number;
}

/** A managed run as the workflows address it; the workflow id is derived, never chosen by callers. */
export interface ManagedRunRef {
  runId: string;
  experimentId: string;
  n: number;
  r: number;
  workflowId: string;
}

/** What the Temporal UI filters and labels a workflow by: its search attributes and memo. */
export interface WorkflowLabels {
  experimentName: string;
  /** The experiment's owner (a user id). */
  owner: string;
  /** The sweep the run belongs to, if any. */
  sweepId?: string;
  /** False when the Temporal namespace lacks Assay's search attributes: the memo only, no attributes. */
  indexed: boolean;
}

export interface ManagedRunInput extends ManagedRunRef {
  /** Absent in workflows started before labels existed. */
  labels?: WorkflowLabels;
  settings: SagaSettings;
  /** Instance losses this run may still recover from; the settings' maximum when absent. */
  recoveriesLeft?: number;
  /**
   * Set by a sweep: signal it `runEnded` as soon as the runner has ended the run (workflows/managed-run.ts).
   */
  releasesSlot?: boolean;
  /** Set when the workflow continued as new while watching: provisioning and start are behind it. */
  watching?: { slicesDone: number };
  /** Set when continuing as new after the compute queue granted the run: its conclusion releases the slot. */
  queued?: boolean;
}

/** The managed-run workflow's signature, for starting it by its type name (a recovery, continuing as new). */
export type ManagedRunWorkflow = (input: ManagedRunInput) => Promise<ManagedRunResult>;

export interface RunSnapshot {
  state: RunState;
  failureReason: FailureReason | null;
  cancelRequested: boolean;
  /** Milliseconds since the run's last sign of life (heartbeat or start), measured by the service's clock. */
  silentForMs: number | null;
}

export interface ManagedRunResult {
  runId: string;
  workflowId: string;
  state: RunState;
  failureReason: FailureReason | null;
  instanceId: string | null;
  outputs: { ready: number; pending: number } | null;
  /** The run that took over after this one's instance was lost. */
  recoveredBy: ManagedRunResult | null;
}

/** The compute queue's answer (workflows/saga-steps/queue.ts). */
export type SlotOutcome =
  /** `queued` false: the provider takes no queue. `gpuIds` null: the machine has no GPU slots. */
  | { kind: 'granted'; queued: boolean; gpuIds: number[] | null }
  | { kind: 'waiting'; position: number; waiting: number }
  /** The run is no longer pending: nothing to start. */
  | { kind: 'ended' };

/** What one watch slice saw last. */
export type WatchOutcome =
  | { kind: 'ended'; state: RunState; failureReason: FailureReason | null }
  | { kind: 'cancel_requested' }
  /** `cause` is absent in histories written before preemption was told apart: a crash. */
  | { kind: 'instance_lost'; cause?: 'crash' | 'preempted' }
  | { kind: 'silent'; silentForMs: number }
  | { kind: 'slice_over' };

export interface SweepInput {
  sweepId: string;
  experimentId: string;
  concurrency: number;
  runs: ManagedRunRef[];
  settings: SagaSettings;
  /** Absent in workflows started before labels existed. */
  labels?: WorkflowLabels;
}

/**
 * The trial sweep (workflows/trial-sweep.ts): either pre-made runs (grid, list, repeat), one trial each, or
 * `search`, whose trials are suggested by the sampler and made as they start.
 */
export interface TrialSweepInput {
  sweepId: string;
  experimentId: string;
  concurrency: number;
  /** New runs a trial gets after failing crash, heartbeat_timeout or provision_failed. */
  maxRetries: number;
  runs: ManagedRunRef[];
  search?: SearchPlan;
  settings: SagaSettings;
  labels?: WorkflowLabels;
}
