// Step 2: wait, bounded, for the runner to start the run.
import { isTerminalRunState } from '@assay/contract';
import type { ManagedRunResult } from '../saga-types.ts';
import { conclude, releaseSlot } from './conclude.ts';
import { fail } from './fail.ts';
import type { Saga } from './saga.ts';
import { waitForRun } from './wait-for-run.ts';

/** Answers the saga's result when the run ended before the watch (no start, or done already), else null. */
export async function awaitStart(saga: Saga): Promise<ManagedRunResult | null> {
  const { startTimeoutMs } = saga.settings;
  const start = await waitForRun(saga, (run) => run.state !== 'pending', startTimeoutMs, true, saga.lean);
  if (!start.alive) {
    await fail(saga, 'provision_failed', 'the instance exited before the run started');
    return conclude(saga, false);
  }
  if (start.timedOut) {
    await fail(
      saga,
      'provision_failed',
      `the run did not start within ${startTimeoutMs / 1000} s of provisioning`,
    );
    return conclude(saga, false);
  }
  if (isTerminalRunState(start.run.state)) {
    releaseSlot(saga, start.run.state);
    return conclude(saga, true);
  }
  return null;
}
