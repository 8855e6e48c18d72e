// A sweep's runs as a researcher reads them: each run's trial and outcome (stopped early and retried are
// outcomes of their own, not errors) and the objective against trial number.
import type { Goal, Sweep, SweepRun, SweepRunCounts } from '@assay/contract';

/** What a sweep run came to: its state, or `stopped_early` / `retried` for the failures that are neither. */
export type RunOutcome = SweepRun['state'] | 'stopped_early' | 'retried';

/** The outcome's words on screen. */
export const OUTCOME_LABEL: Record<RunOutcome, string> = {
  pending: 'pending',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  stopped_early: 'stopped early',
  retried: 'retried',
};

/** The runs that have ended, whatever the way. */
export const endedRuns = (p: SweepRunCounts) => p.succeeded + p.failed + p.stopped_early + p.retried;

/** One run of a sweep with its trial number and outcome. */
export interface TrialRun {
  run: SweepRun;
  /** The search's trial number; for a grid or list, the point's place among the sweep's variations. */
  trial: number;
  outcome: RunOutcome;
}

/**
 * Each run's trial and outcome: a run that a later run names in `retries_run_id` was retried (the later run
 * took over its trial), whatever its failure.
 */
export function trialRuns(sweep: Pick<Sweep, 'runs'>): TrialRun[] {
  const retried = new Set(sweep.runs.map((r) => r.retries_run_id).filter((id) => id !== null));
  const points = [...new Set(sweep.runs.map((r) => r.n))].sort((a, b) => a - b);
  return sweep.runs.map((run) => {
    let outcome: RunOutcome = run.state;
    if (retried.has(run.id)) outcome = 'retried';
    else if (run.state === 'failed' && run.failure_reason === 'stopped_early') outcome = 'stopped_early';
    return { run, trial: run.trial ?? points.indexOf(run.n) + 1, outcome };
  });
}

/** Whether `a` is a better objective value than `b` for the goal. */
export const better = (goal: Goal, a: number, b: number) => (goal === 'minimize' ? a < b : a > b);

/** One point per ended trial that logged the objective, in trial order, split by how it ended. */
export interface ObjectivePoints {
  trials: number[];
  /** The finished trials' values (null where the trial at that index did not finish). */
  finished: Array<number | null>;
  /** Stopped trials' last values: partial, so drawn apart from the finished ones. */
  stopped: Array<number | null>;
  /** The best finished value up to each trial. */
  bestSoFar: Array<number | null>;
}

export function objectivePoints(trials: readonly TrialRun[], goal: Goal): ObjectivePoints {
  const ended = trials
    .filter(({ run }) => run.objective !== null && Number.isFinite(run.objective))
    .filter(({ outcome }) => outcome === 'succeeded' || outcome === 'stopped_early')
    .sort((a, b) => a.trial - b.trial);
  const points: ObjectivePoints = { trials: [], finished: [], stopped: [], bestSoFar: [] };
  let best: number | null = null;
  for (const { run, trial, outcome } of ended) {
    const value = run.objective!;
    const done = outcome === 'succeeded';
    if (done && (best === null || better(goal, value, best))) best = value;
    points.trials.push(trial);
    points.finished.push(done ? value : null);
    points.stopped.push(done ? null : value);
    points.bestSoFar.push(best);
  }
  return points;
}
