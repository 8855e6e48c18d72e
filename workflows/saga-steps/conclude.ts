// The saga's ending, on every path: collect the outputs, end the instance, revoke the key, leave the run terminal.
import { CancellationScope, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { isTerminalRunState, type RunState } from '@assay/contract';
import { runEndedSignal } from '../definitions.ts';
import type { ManagedRunResult } from '../saga-types.ts';
import { cleanup, service } from './activities.ts';
import type { Saga } from './saga.ts';

/**
 * Outputs, then the instance, then the key (the reverse of provisioning): the runner may still be finishing
 * uploads with that key. Not cancellable, so that a cancelled saga still cleans up.
 */
export async function conclude(saga: Saga, waitForOutputs: boolean): Promise<ManagedRunResult> {
  const { runId, workflowId, settings } = saga;
  if (saga.signalDriven)
    return CancellationScope.nonCancellable(async () => {
      const { outputs, run } = await cleanup.concludeRun({
        runId,
        workflowId,
        outputsTimeoutMs: waitForOutputs ? settings.outputsTimeoutMs : 0,
        pollMs: settings.pollMs,
      });
      return result(saga, run, outputs);
    });
  return CancellationScope.nonCancellable(async () => {
    const outputs = await cleanup.collectOutputs({
      runId,
      timeoutMs: waitForOutputs ? settings.outputsTimeoutMs : 0,
      pollMs: settings.pollMs,
    });
    await cleanup.terminateInstance(workflowId);
    await service.revokeWorkerKeys(runId);
    let run = await service.readRun(runId);
    if (!isTerminalRunState(run.state))
      run = await service.failRun(runId, 'abandoned', 'the managed run ended before its runner did');
    return result(saga, run, outputs);
  });
}

function result(
  saga: Saga,
  run: Pick<ManagedRunResult, 'state' | 'failureReason'>,
  outputs: ManagedRunResult['outputs'],
): ManagedRunResult {
  return {
    runId: saga.runId,
    workflowId: saga.workflowId,
    state: run.state,
    failureReason: run.failureReason,
    instanceId: saga.instanceId,
    outputs,
    recoveredBy: null,
  };
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
