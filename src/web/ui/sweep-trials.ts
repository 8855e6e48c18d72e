// A sweep's runs as a researcher reads them: each run's outcome (stopped early and retried are outcomes of
// their own, not errors) and the objective against trial number.
import type { Goal, SweepRun } from '@assay/contract';

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

/** The runs a later run of the same variation took over (a retry reuses its trial's variation: same n). */
export function retriedRuns(runs: readonly SweepRun[]): Set<SweepRun> {
  const latest = new Map<number, number>();
  for (const run of runs) latest.set(run.n, Math.max(latest.get(run.n) ?? 0, run.r));
  const retried = new Set<SweepRun>();
  for (const run of runs) {
    const newer = (latest.get(run.n) ?? 0) > run.r;
    if (run.trial !== null && run.state === 'failed' && newer) retried.add(run);
  }
  return retried;
}

export function outcomeOf(run: SweepRun, retried: ReadonlySet<SweepRun>): RunOutcome {
  if (retried.has(run)) return 'retried';
  if (run.state === 'failed' && run.failure_reason === 'stopped_early') return 'stopped_early';
  return run.state;
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

export function objectivePoints(runs: readonly SweepRun[], goal: Goal): ObjectivePoints {
  const retried = retriedRuns(runs);
  const ended = runs
    .filter((run) => run.trial !== null && run.objective !== null && Number.isFinite(run.objective))
    .map((run) => ({ run, outcome: outcomeOf(run, retried) }))
    .filter(({ outcome }) => outcome === 'succeeded' || outcome === 'stopped_early')
    .sort((a, b) => a.run.trial! - b.run.trial!);
  const points: ObjectivePoints = { trials: [], finished: [], stopped: [], bestSoFar: [] };
  let best: number | null = null;
  for (const { run, outcome } of ended) {
    const value = run.objective!;
    const done = outcome === 'succeeded';
    if (done && (best === null || better(goal, value, best))) best = value;
    points.trials.push(run.trial!);
    points.finished.push(done ? value : null);
    points.stopped.push(done ? null : value);
    points.bestSoFar.push(best);
  }
  return points;
}
