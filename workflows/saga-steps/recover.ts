// After a lost instance: a recovery run of the variation, as a child, resuming from the newest checkpoint.
import { ParentClosePolicy, executeChild } from '@temporalio/workflow';
import { runSearchAttributes, workflowMemo } from '../definitions.ts';
import type { ManagedRunResult, ManagedRunWorkflow } from '../saga-types.ts';
import { service } from './activities.ts';
import type { Saga } from './saga.ts';

/** The concluded run's result, with the recovery's (and its own recoveries') once that one is over. */
export async function recover(saga: Saga, result: ManagedRunResult): Promise<ManagedRunResult> {
  const { input, settings } = saga;
  const left = input.recoveriesLeft ?? settings.maxRecoveries;
  if (left <= 0) return result;
  const next = await service.createRecoveryRun(saga.runId);
  const labels = input.labels;
  // By type name, as the service starts it: this module is part of managedRun itself.
  const recoveredBy = await executeChild<ManagedRunWorkflow>('managedRun', {
    workflowId: next.workflowId,
    args: [{ ...next, settings, recoveriesLeft: left - 1, ...(labels ? { labels } : {}) }],
    ...(labels
      ? { typedSearchAttributes: runSearchAttributes(next, labels), memo: workflowMemo(labels) }
      : {}),
    // A terminated parent must still let the child compensate.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
  return { ...result, recoveredBy };
}
