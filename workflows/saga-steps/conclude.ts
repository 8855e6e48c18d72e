// The saga's ending on every path (outputs, instance, key, a terminal run), and the sweep's early notice.
import { CancellationScope, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import type { RunState } from '@assay/contract';
import { runEndedSignal } from '../definitions.ts';
import type { ManagedRunResult } from '../saga-types.ts';
import { cleanup } from './activities.ts';
import type { Saga } from './saga.ts';

/**
 * One activity (`concludeRun`): outputs, then the instance, then the key and the compute slot (the reverse
 * of provisioning), since the runner may still be finishing uploads with that key; a run not terminal by then
 * fails `abandoned`. Not cancellable, so that a cancelled saga still cleans up.
 */
export function conclude(saga: Saga, waitForOutputs: boolean): Promise<ManagedRunResult> {
  const { runId, workflowId, settings } = saga;
  return CancellationScope.nonCancellable(async () => {
    const { outputs, run } = await cleanup.concludeRun({
      runId,
      workflowId,
      outputsTimeoutMs: waitForOutputs ? settings.outputsTimeoutMs : 0,
      pollMs: settings.pollMs,
      // A run that went through the compute queue leaves it, so the next waiting run starts.
      ...(saga.queued ? { releaseSlot: true } : {}),
    });
    const { state, failureReason } = run;
    return {
      runId,
      workflowId,
      state,
      failureReason,
      instanceId: saga.instanceId,
      outputs,
      recoveredBy: null,
    };
  });
}

/**
 * Tells the sweep that started this run that the run is over, so that it starts its next run while this
 * saga concludes. Only for a run its runner ended: its instance is exiting by itself. Not awaited: the
 * signal goes out with the conclusion's first step, and a sweep that is gone changes nothing here.
 */
export function releaseSlot(saga: Saga, state: RunState): void {
  const parent = workflowInfo().parent;
  if (!saga.lean || !saga.input.releasesSlot || !parent) return;
  getExternalWorkflowHandle(parent.workflowId)
    .signal(runEndedSignal, { runId: saga.runId, state })
    .catch(() => undefined);
}
