// A sweep: one managed run per grid point, at most `concurrency` at a time, its progress queryable.
import {
  CancellationScope,
  ParentClosePolicy,
  condition,
  executeChild,
  isCancellation,
  patched,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { progressQuery, runEndedSignal, runSearchAttributes, workflowMemo } from './definitions.ts';
import { LEAN_SAGA, managedRun } from './managed-run.ts';
import type { RunState, SweepProgress } from '@assay/contract';
import type { ManagedRunResult, ManagedRunRef, SweepInput } from './saga-types.ts';

// Each run's slot in the progress count: its state, a recovered run counting as its last recovery's.
type Slot = RunState;

const service = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * A recovered run counts as its last recovery's outcome: that is the run that carried the work to the end.
 */
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

  // Histories recorded before LEAN_SAGA hold a lane's slot until its child workflow returns.
  const early = patched(LEAN_SAGA);
  // Runs whose runner ended them (the child's `runEnded`), though their sagas may still be concluding.
  const ended = new Set<string>();
  setHandler(runEndedSignal, ({ runId, state }) => {
    if (!slots.has(runId)) return;
    ended.add(runId);
    if (slots.get(runId) === 'running') slots.set(runId, state === 'succeeded' ? 'succeeded' : 'failed');
  });

  async function child(run: ManagedRunRef): Promise<void> {
    try {
      const labels = input.labels && { ...input.labels, sweepId: input.sweepId };
      const result = await executeChild(managedRun, {
        workflowId: run.workflowId,
        args: [
          {
            ...run,
            settings: input.settings,
            ...(labels ? { labels } : {}),
            ...(early ? { releasesSlot: true } : {}),
          },
        ],
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

  // Children whose lane moved on before they returned: awaited before the sweep reports.
  const concluding: Promise<void>[] = [];
  const queue: ManagedRunRef[] = [...input.runs];
  async function lane() {
    for (let run = queue.shift(); run; run = queue.shift()) {
      slots.set(run.runId, 'running');
      if (!early) {
        await child(run);
        continue;
      }
      // The slot is free when the run has ended (the signal), or when the child returns without one (a run
      // that failed otherwise, or a lost instance's recovery run that ended too).
      let returned = false;
      const running = child(run).finally(() => {
        returned = true;
      });
      concluding.push(running);
      const { runId } = run;
      await condition(() => returned || ended.has(runId));
      if (returned) await running;
    }
  }

  // allSettled: every lane and every child must finish its compensation before the sweep reports, even
  // when cancelled.
  const lanes = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(input.concurrency, input.runs.length)) }, lane),
  );
  const children = await Promise.allSettled(concluding);
  const failure = [...lanes, ...children].find((l): l is PromiseRejectedResult => l.status === 'rejected');
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
