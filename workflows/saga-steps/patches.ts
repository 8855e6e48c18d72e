// The saga's patches: which recorded path an execution follows. A history keeps the path it started on.
import { patched } from '@temporalio/workflow';

/**
 * Histories recorded before this patch poll their way through the watch and conclude in four steps; from it on,
 * the service's signal ends the watch and concluding is one activity. Remove once no execution that started
 * before it is open (a run's executions last at most a slice set: `slicesPerExecution` × the watch slice).
 */
export const SIGNAL_DRIVEN_WATCH = 'signal-driven-watch';

/**
 * From this patch on, the saga takes fewer steps before the run starts and gives up its sweep slot earlier:
 * provisioning checks that the run is still pending itself (no read before it); the start wait waits for the
 * service's signal (or a poll) before it reads, and reads the instance only while the run has not started; and
 * a run its runner ended signals its sweep (`runEnded`) before concluding. Remove under the same condition as
 * SIGNAL_DRIVEN_WATCH.
 */
export const LEAN_SAGA = 'lean-saga';

export interface SagaPath {
  /** LEAN_SAGA: the newest path, the one every new execution takes. */
  lean: boolean;
  /** SIGNAL_DRIVEN_WATCH, or LEAN_SAGA, which implies it. */
  signalDriven: boolean;
}

/** Decided once, as the saga starts, in the order the recorded histories asked. */
export function sagaPath(): SagaPath {
  // LEAN_SAGA implies SIGNAL_DRIVEN_WATCH: a new history records one patch (a marker and a search-attribute
  // update fewer per run); one recorded before it finds no LEAN_SAGA marker and asks for the older patch as it did.
  const lean = patched(LEAN_SAGA);
  return { lean, signalDriven: lean || patched(SIGNAL_DRIVEN_WATCH) };
}
