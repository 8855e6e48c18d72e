// The saga's patches: which recorded path an execution follows. A history keeps the path it started on.
import { deprecatePatch, patched } from '@temporalio/workflow';

/**
 * The service's signal ends the watch, and concluding is one activity. Deprecated: the path before it (a
 * polled watch, a four-step conclusion) is retired, so every path below is signal-driven. Histories that
 * carry its marker (started before LEAN_SAGA) still need the marker met: remove the `deprecatePatch` call
 * once no execution that started before LEAN_SAGA is open.
 */
export const SIGNAL_DRIVEN_WATCH = 'signal-driven-watch';

/**
 * From this patch on, the saga takes fewer steps before the run starts and gives up its sweep slot earlier:
 * provisioning checks that the run is still pending itself (no read before it); the start wait waits for the
 * service's signal (or a poll) before it reads, and reads the instance only while the run has not started;
 * and a run its runner ended signals its sweep (`runEnded`) before concluding. Deprecate once no execution
 * that started before it is open (a run's executions last at most a slice set, `slicesPerExecution` × the
 * watch slice, longer only while one waits for its recovery run).
 */
export const LEAN_SAGA = 'lean-saga';

/**
 * From this patch on, the saga asks the compute queue for the run's slot (and GPUs) before provisioning, and
 * waits there while the machine is full (workflows/saga-steps/queue.ts); its conclusion releases the slot.
 * Deprecate once no execution that started before it is open.
 */
export const COMPUTE_QUEUE = 'compute-queue';

export interface SagaPath {
  /** LEAN_SAGA, taken by every new execution; false only in histories that carry SIGNAL_DRIVEN_WATCH. */
  lean: boolean;
  /** COMPUTE_QUEUE, taken by every new execution; false in histories recorded before it. */
  queue: boolean;
}

/** Decided once, as the saga starts, in the order the recorded histories asked. */
export function sagaPath(): SagaPath {
  // LEAN_SAGA implies SIGNAL_DRIVEN_WATCH: a new history records one patch marker; one recorded before it
  // finds no LEAN_SAGA marker and meets its SIGNAL_DRIVEN_WATCH marker here, as it did.
  const lean = patched(LEAN_SAGA);
  if (!lean) deprecatePatch(SIGNAL_DRIVEN_WATCH);
  // Asked after LEAN_SAGA, so histories recorded before it meet their markers in the order they did.
  const queue = lean && patched(COMPUTE_QUEUE);
  return { lean, queue };
}
