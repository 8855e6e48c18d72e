// The saga's compensation when a step throws: the run is left terminal and the instance and key are ended.
import { CancellationScope, isCancellation, log } from '@temporalio/workflow';
import { isTerminalRunState } from '@assay/contract';
import { service } from './activities.ts';
import { conclude } from './conclude.ts';
import { describeError, fail } from './fail.ts';
import type { Saga } from './saga.ts';
import { waitForRun } from './wait-for-run.ts';

/**
 * Runs the compensation for `error` in a non-cancellable scope. A compensation that fails itself is logged
 * and swallowed, so that the caller rethrows the original error.
 */
export async function compensate(saga: Saga, error: unknown): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() =>
      isCancellation(error) ? stopOnTemporalCancel(saga) : failAsCrash(saga, error),
    );
  } catch (own) {
    log.error('the managed run’s compensation failed', { runId: saga.runId, error: describeError(own) });
  }
}

/** Cancelled in Temporal (its UI, a cancelled sweep): ask the runner to stop, give it the grace, end it. */
async function stopOnTemporalCancel(saga: Saga): Promise<void> {
  const asked = await service.requestCancel(saga.runId);
  if (!isTerminalRunState(asked.state)) {
    const { cancelGraceMs } = saga.settings;
    const stop = await waitForRun(saga, (run) => isTerminalRunState(run.state), cancelGraceMs, false);
    if (!isTerminalRunState(stop.run.state))
      await fail(saga, 'abandoned', 'cancelled; the runner did not stop in time');
  }
  await conclude(saga, false);
}

async function failAsCrash(saga: Saga, error: unknown): Promise<void> {
  await fail(saga, 'crash', `the managed run failed: ${describeError(error)}`);
  await conclude(saga, false);
}
