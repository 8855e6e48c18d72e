// Step 1: start the run's instance. The activity mints the run's one-time exchange token itself (never its
// result, so no token is in the history), and the instance's runner trades it for the worker key.
import { isCancellation } from '@temporalio/workflow';
import type { ManagedRunResult } from '../saga-types.ts';
import { compute, service } from './activities.ts';
import { conclude } from './conclude.ts';
import { describeError, fail } from './fail.ts';
import type { Saga } from './saga.ts';

/** The saga's result when the run ended here (refused, no longer pending); null when it goes on. */
export async function provision(saga: Saga): Promise<ManagedRunResult | null> {
  if (!saga.lean) {
    const before = await service.readRun(saga.runId);
    if (before.state !== 'pending') return conclude(saga, false);
  }
  try {
    // The lean saga's provisioning starts nothing for a run that is no longer pending (instanceId null).
    // The GPUs the compute queue granted go with it (CUDA_VISIBLE_DEVICES on `local`).
    const granted = saga.gpuIds === undefined ? {} : { gpuIds: saga.gpuIds };
    const asked = saga.lean ? { ...saga.ref, onlyIfPending: true, ...granted } : saga.ref;
    saga.instanceId = (await compute.provisionInstance(asked)).instanceId;
  } catch (error) {
    if (isCancellation(error)) throw error;
    await fail(saga, 'provision_failed', `provisioning failed: ${describeError(error)}`);
    return conclude(saga, false);
  }
  if (saga.instanceId === null) return conclude(saga, false);
  return null;
}
