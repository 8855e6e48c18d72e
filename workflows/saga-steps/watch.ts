// Step 3: watch the running run, slice by slice, until it ends; then conclude (and recover a lost instance).
import { CancellationScope, condition, continueAsNew } from '@temporalio/workflow';
import { isTerminalRunState } from '@assay/contract';
import type { ManagedRunResult, ManagedRunWorkflow, WatchOutcome } from '../saga-types.ts';
import { service } from './activities.ts';
import { conclude, releaseSlot } from './conclude.ts';
import { fail } from './fail.ts';
import { recover } from './recover.ts';
import type { Saga } from './saga.ts';
import { waitForRun } from './wait-for-run.ts';

/** Returns once the run is concluded; continues as new after a slice set, so no history grows long. */
export async function watch(saga: Saga): Promise<ManagedRunResult> {
  const { settings } = saga;
  let slices = saga.input.watching?.slicesDone ?? 0;
  for (;;) {
    const seen = await watchSlice(saga);
    switch (seen.kind) {
      case 'slice_over':
        slices += 1;
        // A week-long run stays a handful of events per execution: each slice is one activity.
        if (slices >= settings.slicesPerExecution)
          return await continueAsNew<ManagedRunWorkflow>({
            ...saga.input,
            watching: { slicesDone: 0 },
            ...(saga.queued ? { queued: true } : {}),
          });
        continue;
      case 'ended':
        releaseSlot(saga, seen.state);
        return await conclude(saga, true);
      case 'silent':
        await fail(saga, 'heartbeat_timeout', `no heartbeat for ${Math.round(seen.silentForMs / 1000)} s`);
        return await conclude(saga, false);
      case 'cancel_requested':
        return await stopOnCancel(saga);
      case 'instance_lost':
        if (seen.cause === 'preempted')
          await fail(
            saga,
            'preempted',
            'the provider took the instance back (preempted) before the run ended',
          );
        else await fail(saga, 'crash', 'the instance was lost before the run ended');
        return await recover(saga, await conclude(saga, false));
    }
  }
}

/** Asked to cancel through the service: the runner gets the grace to stop, then the run is ended. */
async function stopOnCancel(saga: Saga): Promise<ManagedRunResult> {
  const { cancelGraceMs } = saga.settings;
  const stop = await waitForRun(saga, (run) => isTerminalRunState(run.state), cancelGraceMs, false);
  const stopped = isTerminalRunState(stop.run.state);
  if (!stopped)
    await fail(saga, 'abandoned', `cancelled; the runner did not stop within ${cancelGraceMs / 1000} s`);
  return conclude(saga, stopped);
}

/**
 * One watch slice. The activity polls (a fallback for a lost signal); the service's signal ends it at once:
 * the workflow reads the run, and when it ended or was asked to cancel, cancels the activity and acts. A
 * signal that changes nothing (the start's, arriving late) leaves the activity running.
 */
async function watchSlice(saga: Saga): Promise<WatchOutcome> {
  const { runId, workflowId, settings } = saga;
  const args = {
    runId,
    workflowId,
    silenceTimeoutMs: settings.silenceTimeoutMs,
    pollMs: settings.pollMs,
    sliceMs: settings.watchSliceMs,
  };
  saga.nudged = false;
  const scope = new CancellationScope();
  const watching = scope.run(() => saga.watcher.watchRun(args));
  // Rejected with a CancelledFailure once cancelled below, when nobody awaits it any more.
  watching.catch(() => undefined);
  for (;;) {
    const outcome = await Promise.race([watching, condition(() => saga.nudged).then(() => undefined)]);
    if (outcome) return outcome;
    saga.nudged = false;
    const run = await service.readRun(runId);
    const seen: WatchOutcome | undefined = isTerminalRunState(run.state)
      ? { kind: 'ended', state: run.state, failureReason: run.failureReason }
      : run.cancelRequested
        ? { kind: 'cancel_requested' }
        : undefined;
    if (seen) {
      scope.cancel();
      return seen;
    }
  }
}
