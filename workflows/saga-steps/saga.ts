// What every step of one managed run's saga shares: its input, its path, the service's nudge, its instance.
import { setHandler } from '@temporalio/workflow';
import { runChangedSignal } from '../definitions.ts';
import type { ManagedRunInput, ManagedRunRef, SagaSettings } from '../saga-types.ts';
import { watcherFor } from './activities.ts';
import { sagaPath, type SagaPath } from './patches.ts';

export interface Saga extends SagaPath {
  readonly input: ManagedRunInput;
  readonly settings: SagaSettings;
  readonly ref: ManagedRunRef;
  readonly runId: string;
  readonly workflowId: string;
  readonly watcher: ReturnType<typeof watcherFor>;
  /** Set by the service's `runChanged` signal: look at the run now instead of at the next poll. */
  nudged: boolean;
  /** The instance provisioning started; null before it, or when it started none. */
  instanceId: string | null;
  /** The run is in the compute queue (waiting or granted): its conclusion releases its place. */
  queued: boolean;
  /** The GPUs the queue granted (null: the machine has none to hand out; undefined: no queue asked). */
  gpuIds: number[] | null | undefined;
}

/** Picks the path (the patches) and listens for the service's signal: the saga's first two acts. */
export function startSaga(input: ManagedRunInput): Saga {
  const { settings, runId, workflowId } = input;
  const saga: Saga = {
    ...sagaPath(),
    input,
    settings,
    ref: { runId, workflowId, experimentId: input.experimentId, n: input.n, r: input.r },
    runId,
    workflowId,
    watcher: watcherFor(settings),
    nudged: false,
    instanceId: null,
    queued: input.queued ?? false,
    gpuIds: undefined,
  };
  setHandler(runChangedSignal, () => {
    saga.nudged = true;
  });
  return saga;
}
