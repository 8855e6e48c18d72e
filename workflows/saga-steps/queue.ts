// Step 0: a run slot (and the GPUs the launch block asks for) from the `local` compute queue. One local
// activity when there is room or no queue (other providers); while the machine is full, a heartbeating
// activity waits slice by slice, and the service's signal (a cancel) cuts the wait short at once.
import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { ManagedRunResult, SlotOutcome } from '../saga-types.ts';
import { service } from './activities.ts';
import { conclude } from './conclude.ts';
import { describeError, fail } from './fail.ts';
import type { Saga } from './saga.ts';

/** The saga's result when the run ended here (refused, cancelled while waiting); null once granted. */
export async function awaitComputeSlot(saga: Saga): Promise<ManagedRunResult | null> {
  if (!saga.queue) return null;
  let outcome: SlotOutcome | 'ended';
  // Until the service says otherwise the run may be in the queue (a cancel can cut the first ask short after
  // it was granted): the conclusion releases it, which is harmless when it is not.
  saga.queued = true;
  try {
    outcome = await service.acquireSlot(saga.runId);
    while (outcome !== 'ended' && outcome.kind === 'waiting') outcome = await waitSlice(saga);
  } catch (error) {
    if (isCancellation(error)) throw error;
    await fail(saga, 'provision_failed', `the compute queue refused the run: ${describeError(error)}`);
    return conclude(saga, false);
  }
  if (outcome === 'ended' || outcome.kind === 'ended') return conclude(saga, false);
  saga.queued = outcome.queued;
  saga.gpuIds = outcome.gpuIds;
  return null;
}

/**
 * One slice of waiting. The activity polls the queue; the service's signal makes the workflow read the run,
 * and a run that is no longer pending (cancelled while it waited) stops the wait at once.
 */
async function waitSlice(saga: Saga): Promise<SlotOutcome | 'ended'> {
  const { settings } = saga;
  saga.nudged = false;
  const scope = new CancellationScope();
  const waiting = scope.run(() =>
    saga.watcher.awaitSlot({ runId: saga.runId, pollMs: settings.pollMs, sliceMs: settings.watchSliceMs }),
  );
  // Rejected with a CancelledFailure once cancelled below, when nobody awaits it any more.
  waiting.catch(() => undefined);
  for (;;) {
    const outcome = await Promise.race([waiting, condition(() => saga.nudged).then(() => undefined)]);
    if (outcome) return outcome;
    saga.nudged = false;
    const run = await service.readRun(saga.runId);
    if (run.state !== 'pending') {
      scope.cancel();
      return 'ended';
    }
  }
}
