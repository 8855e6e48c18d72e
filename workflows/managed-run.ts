// One managed run as a saga: a compute slot → provision → await start → watch → conclude (outputs, instance, key, a terminal
// run), with the compensation on every path. Each step is a function of its own in workflows/saga-steps/.
import { ContinueAsNew } from '@temporalio/workflow';
import type { ManagedRunInput, ManagedRunResult } from './saga-types.ts';
import { awaitStart } from './saga-steps/await-start.ts';
import { compensate } from './saga-steps/compensate.ts';
import { provision } from './saga-steps/provision.ts';
import { awaitComputeSlot } from './saga-steps/queue.ts';
import { startSaga } from './saga-steps/saga.ts';
import { watch } from './saga-steps/watch.ts';

export { LEAN_SAGA, SIGNAL_DRIVEN_WATCH } from './saga-steps/patches.ts';

export async function managedRun(input: ManagedRunInput): Promise<ManagedRunResult> {
  const saga = startSaga(input);
  try {
    // An execution that continued as new is past its start: it goes on watching.
    if (!input.watching) {
      const ended = (await awaitComputeSlot(saga)) ?? (await provision(saga)) ?? (await awaitStart(saga));
      if (ended) return ended;
    }
    return await watch(saga);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    await compensate(saga, error);
    throw error;
  }
}
