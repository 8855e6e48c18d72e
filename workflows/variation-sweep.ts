// A sweep: one managed run per grid point, at most `concurrency` at a time, its progress queryable.
import {
  CancellationScope,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { progressQuery, runSearchAttributes, workflowMemo } from './definitions.ts';
import { managedRun } from './managed-run.ts';
import type { RunState, SweepProgress } from '@assay/contract';
import type { ManagedRunResult, ManagedRunRef, SweepInput } from './saga-types.ts';

// Each run's slot in the progress count: its state, a recovered run counting as its last recovery's.
type Slot = RunState;

const service = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** A recovered run counts as its last recovery's outcome: that is the run that carried the work to the end. */
function finalState(result: ManagedRunResult): Slot {
  let last = result;
  while (last.recoveredBy) last = last.recoveredBy;
  return last.state === 'succeeded' ? 'succeeded' : 'failed';
}

export async function variationSweep(input: SweepInput): Promise<SweepProgress> {
  const slots = new Map<string, Slot>(input.runs.map((run) => [run.runId, 'pending']));
  let done = false;
  const progress = (): SweepProgress => {
    const count = (state: Slot) => [...slots.values()].filter((s) => s === state).length;
    return {
      total: slots.size,
      pending: count('pending'),
      running: count('running'),
      succeeded: count('succeeded'),
      failed: count('failed'),
      done,
    };
  };
  setHandler(progressQuery, progress);

  const queue: ManagedRunRef[] = [...input.runs];
  async function lane() {
    for (let run = queue.shift(); run; run = queue.shift()) {
      slots.set(run.runId, 'running');
      try {
        const labels = input.labels && { ...input.labels, sweepId: input.sweepId };
        const result = await executeChild(managedRun, {
          workflowId: run.workflowId,
          args: [{ ...run, settings: input.settings, ...(labels ? { labels } : {}) }],
          ...(labels
            ? { typedSearchAttributes: runSearchAttributes(run, labels), memo: workflowMemo(labels) }
            : {}),
          // Terminating the sweep must still let each run compensate (terminate its instance, revoke its key).
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        });
        slots.set(run.runId, finalState(result));
      } catch (error) {
        slots.set(run.runId, 'failed');
        if (isCancellation(error)) throw error;
      }
    }
  }

  // allSettled: every lane must finish its child's compensation before the sweep reports, even when cancelled.
  const lanes = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(input.concurrency, input.runs.length)) }, lane),
  );
  const failure = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failure) {
    // Runs that never started would wait forever as pending: end them, then report.
    await CancellationScope.nonCancellable(async () => {
      for (const run of queue.splice(0)) {
        await service.requestCancel(run.runId);
        slots.set(run.runId, 'failed');
      }
    });
    done = true;
    throw failure.reason;
  }
  done = true;
  return progress();
}
