// One trial's runs: a managed run as a child workflow and, after a failure a sweep retries (crash,
// heartbeat_timeout, provision_failed), a new run of the same variation while retries are left.
import { ParentClosePolicy, condition, executeChild, isCancellation } from '@temporalio/workflow';
import { RETRYABLE_FAILURE_REASONS, type RunState } from '@assay/contract';
import { runSearchAttributes, workflowMemo } from '../definitions.ts';
import { managedRun } from '../managed-run.ts';
import type { ManagedRunRef, ManagedRunResult, TrialSweepInput } from '../saga-types.ts';
import { service } from './activities.ts';

export type TrialOutcome = 'succeeded' | 'failed';

/** What the sweep's lanes share while running trials. */
export interface TrialContext {
  input: TrialSweepInput;
  /** Runs their runners ended (the children's `runEnded` signals), before their sagas concluded. */
  ended: Map<string, RunState>;
  /** Children whose lane moved on before they returned: awaited before the sweep reports. */
  concluding: Promise<void>[];
}

/** The run that carried the work to its end: a recovered run's last recovery. */
function lastOf(result: ManagedRunResult): ManagedRunResult {
  let last = result;
  while (last.recoveredBy) last = last.recoveredBy;
  return last;
}

/** The child's result; undefined when it failed (not by cancellation, which is rethrown). */
async function child(ctx: TrialContext, run: ManagedRunRef): Promise<ManagedRunResult | undefined> {
  const { input } = ctx;
  const labels = input.labels && { ...input.labels, sweepId: input.sweepId };
  try {
    return await executeChild(managedRun, {
      workflowId: run.workflowId,
      args: [{ ...run, settings: input.settings, releasesSlot: true, ...(labels ? { labels } : {}) }],
      ...(labels
        ? { typedSearchAttributes: runSearchAttributes(run, labels), memo: workflowMemo(labels) }
        : {}),
      // Terminating the sweep must still let each run compensate (terminate its instance, revoke its key).
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
  } catch (error) {
    if (isCancellation(error)) throw error;
    return undefined;
  }
}

type Attempt = { kind: 'ended'; outcome: TrialOutcome } | { kind: 'retry'; failedRunId: string };

/**
 * One run of the trial. The lane is free as soon as the runner ended the run (its signal), while the saga
 * concludes, unless a failure could be retried: then the child's result (its failure reason) decides.
 */
async function attempt(ctx: TrialContext, run: ManagedRunRef, mayRetry: boolean): Promise<Attempt> {
  let returned = false;
  const running = child(ctx, run).finally(() => {
    returned = true;
  });
  // Awaited by the sweep whatever happens here: a cancelled sweep waits for its children's compensations.
  ctx.concluding.push(running.then(() => undefined));
  const released = () => {
    const state = ctx.ended.get(run.runId);
    return state === 'succeeded' || (state !== undefined && !mayRetry);
  };
  await condition(() => returned || released());
  if (!returned)
    return { kind: 'ended', outcome: ctx.ended.get(run.runId) === 'succeeded' ? 'succeeded' : 'failed' };
  const result = await running;
  if (!result) return { kind: 'ended', outcome: 'failed' };
  const last = lastOf(result);
  if (last.state === 'succeeded') return { kind: 'ended', outcome: 'succeeded' };
  const retryable = last.failureReason !== null && RETRYABLE_FAILURE_REASONS.includes(last.failureReason);
  return mayRetry && retryable
    ? { kind: 'retry', failedRunId: last.runId }
    : { kind: 'ended', outcome: 'failed' };
}

/** Runs the trial's first run, then its retries while they are left and its failures retryable. */
export async function runTrial(ctx: TrialContext, first: ManagedRunRef): Promise<TrialOutcome> {
  let run = first;
  for (let left = ctx.input.maxRetries; ; left -= 1) {
    const outcome = await attempt(ctx, run, left > 0);
    if (outcome.kind === 'ended') return outcome.outcome;
    // Keyed by the failed run: asking again (a replayed local activity) answers the same new run.
    run = await service.createRetryRun(outcome.failedRunId);
  }
}
