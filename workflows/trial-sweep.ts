// A sweep as trials, at most `concurrency` at once: pre-made runs (grid, list, repeat) or, for a searching
// sweep, trials suggested one by one by the sampler (random, sobol, tpe) and made as they start. Each trial
// is a managed run as a child, retried after a crash while `maxRetries` allows.
import { CancellationScope, setHandler } from '@temporalio/workflow';
import type { RunState, SweepProgress } from '@assay/contract';
import { progressQuery, runEndedSignal } from './definitions.ts';
import type { ManagedRunRef, TrialSweepInput } from './saga-types.ts';
import { samplerOn, service } from './sweep-steps/activities.ts';
import { runTrial, type TrialContext } from './sweep-steps/trial-runs.ts';

type Slot = 'pending' | 'running' | 'succeeded' | 'failed';

/**
 * The trial's first run: a searching sweep asks the service for the trials so far, the sampler for a point
 * and the service for the trial's variation and run (idempotent on sweep and trial). All three are activity
 * results, so a replay after a crash makes the same trial from history.
 */
async function makeTrial(input: TrialSweepInput, trial: number): Promise<ManagedRunRef> {
  const plan = input.search!;
  const history = (await service.trialHistory(input.sweepId)).filter((t) => t.trial < trial);
  const { params } = await samplerOn(plan.queue)({
    strategy: plan.strategy,
    space: plan.space,
    goal: plan.goal,
    seed: plan.seed,
    trial,
    history,
  });
  return service.createTrial({ sweepId: input.sweepId, trial, params });
}

export async function trialSweep(input: TrialSweepInput): Promise<SweepProgress> {
  const total = input.search ? input.search.trials : input.runs.length;
  const slots: Slot[] = Array.from({ length: total }, () => 'pending');
  let done = false;
  const progress = (): SweepProgress => {
    const count = (slot: Slot) => slots.filter((s) => s === slot).length;
    return {
      total,
      pending: count('pending'),
      running: count('running'),
      succeeded: count('succeeded'),
      failed: count('failed'),
      done,
    };
  };
  setHandler(progressQuery, progress);
  const ended = new Map<string, RunState>();
  setHandler(runEndedSignal, ({ runId, state }) => {
    ended.set(runId, state);
  });
  const ctx: TrialContext = { input, ended, concluding: [] };

  let next = 0;
  async function lane() {
    while (next < total) {
      const k = next++;
      slots[k] = 'running';
      const first = input.search ? await makeTrial(input, k + 1) : input.runs[k]!;
      slots[k] = await runTrial(ctx, first);
    }
  }

  // allSettled: every lane and every child must finish its compensation before the sweep reports, even
  // when cancelled.
  const lanes = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(input.concurrency, total)) }, lane),
  );
  const children = await Promise.allSettled(ctx.concluding);
  const failure = [...lanes, ...children].find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failure) {
    // Runs never started (pre-made, or made as the cancel came) would wait forever as pending: end them.
    await CancellationScope.nonCancellable(() => service.abandonPendingSweepRuns(input.sweepId));
    for (const [k, slot] of slots.entries()) if (slot !== 'succeeded') slots[k] = 'failed';
    done = true;
    throw failure.reason;
  }
  done = true;
  return progress();
}
